#include "report/svg_chart.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

#include "report/html_text.h"

namespace kforge::report::svg {

namespace {

// Layout (pixels in viewBox units).
constexpr double kMarginLeft = 64;
constexpr double kMarginRight = 24;
constexpr double kMarginTop = 40;  // the legend row
constexpr double kMarginBottom = 48;
constexpr double kLegendY = 16;
constexpr double kBarLabelWidth = 230;
constexpr double kBarValueRoom = 64;
constexpr double kLogPad = 1.15;     // log axes extend by this factor each way
constexpr double kLinearPad = 0.05;  // linear axes by this fraction of the range
constexpr int kTargetTicks = 6;
constexpr int kMaxLogTicks = 10;
constexpr size_t kMaxLabelChars = 32;
// An upper estimate of one character's width in the charts' 12 px font, for
// deciding on which side of a line a text fits (SVG text has no wrapping).
constexpr double kCharWidthPx = 7;
// The least height of one series' bar in a bar chart row: room for its
// 10 px value label, so the labels of two series do not overlap.
constexpr double kMinSeriesBarPx = 12;
constexpr double kBarRowPaddingPx = 6;
constexpr const char* kGridColor = "#e5e7eb";
constexpr const char* kAxisColor = "#6b7280";
constexpr const char* kTextColor = "#374151";
constexpr const char* kReferenceColor = "#111827";

std::string Px(double v) {
  return fmt::format("{:.1f}", v);
}

std::string Attr(const std::string& s) {
  return EscapeHtml(s);
}

std::string DefaultTick(double v) {
  return fmt::format("{:g}", v);
}

TickFormat FormatOf(const Axis& axis) {
  return axis.format ? axis.format : TickFormat(DefaultTick);
}

struct Range {
  double lo = std::numeric_limits<double>::infinity();
  double hi = -std::numeric_limits<double>::infinity();
  void Add(double v, bool log) {
    if (!std::isfinite(v) || (log && v <= 0)) return;
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  bool empty() const { return lo > hi; }
};

struct Scale {
  double lo = 0, hi = 1;
  bool log = false;
  double from = 0, to = 1;  // pixels
  double T(double v) const {
    if (log) {
      v = std::max(v, lo);
      return (std::log10(v) - std::log10(lo)) / (std::log10(hi) - std::log10(lo));
    }
    return (v - lo) / (hi - lo);
  }
  double Map(double v) const {
    double t = std::clamp(T(v), 0.0, 1.0);
    return from + t * (to - from);
  }
};

// The data range, padded and fixed where the axis says so.
Scale ScaleFor(const Axis& axis, Range r, double from, double to) {
  Scale s;
  s.log = axis.log;
  s.from = from;
  s.to = to;
  if (r.empty()) {
    r.lo = axis.log ? 0.5 : 0;
    r.hi = axis.log ? 2 : 1;
  }
  if (!axis.log && axis.include_zero) {
    r.lo = std::min(r.lo, 0.0);
    r.hi = std::max(r.hi, 0.0);
  }
  if (axis.log) {
    s.lo = r.lo / kLogPad;
    s.hi = r.hi * kLogPad;
  } else {
    double span = r.hi - r.lo;
    if (span <= 0) span = std::max(1.0, std::fabs(r.hi));
    s.lo = (axis.include_zero && r.lo == 0) ? 0 : r.lo - span * kLinearPad;
    s.hi = r.hi + span * kLinearPad;
  }
  if (axis.min && (!axis.log || *axis.min > 0)) s.lo = *axis.min;
  if (axis.max) s.hi = *axis.max;
  if (s.hi <= s.lo) s.hi = s.lo + (s.log ? s.lo : 1);
  return s;
}

std::vector<double> TicksFor(const Scale& s) {
  if (s.log && s.hi / s.lo >= 10) return LogTicks(s.lo, s.hi);
  return NiceTicks(s.lo, s.hi, kTargetTicks);
}

std::string Open(int width, int height, const std::string& title) {
  return fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"chart\" viewBox=\"0 0 {} {}\" "
      "role=\"img\" aria-label=\"{}\" font-family=\"system-ui, -apple-system, 'Segoe UI', "
      "Roboto, sans-serif\" font-size=\"12\">\n<title>{}</title>\n",
      width, height, Attr(title), Attr(title));
}

std::string Text(double x, double y, const std::string& text, const char* anchor = "start",
                 const std::string& extra = "") {
  return fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"{}\" fill=\"{}\"{}>{}</text>\n", Px(x),
                     Px(y), anchor, kTextColor, extra, EscapeHtml(text));
}

std::string MarkerPath(MarkerShape shape, double x, double y, double r) {
  switch (shape) {
    case MarkerShape::kTriangleDown:
      return fmt::format("M{} {}L{} {}L{} {}Z", Px(x - r), Px(y - r * 0.8), Px(x + r),
                         Px(y - r * 0.8), Px(x), Px(y + r));
    case MarkerShape::kDiamond:
      return fmt::format("M{} {}L{} {}L{} {}L{} {}Z", Px(x), Px(y - r), Px(x + r), Px(y), Px(x),
                         Px(y + r), Px(x - r), Px(y));
    case MarkerShape::kSquare:
      return fmt::format("M{} {}H{}V{}H{}Z", Px(x - r * 0.8), Px(y - r * 0.8), Px(x + r * 0.8),
                         Px(y + r * 0.8), Px(x - r * 0.8));
    case MarkerShape::kCircle:
      break;
  }
  return fmt::format("M{} {}a{} {} 0 1 0 {} 0a{} {} 0 1 0 {} 0", Px(x - r), Px(y), Px(r), Px(r),
                     Px(2 * r), Px(r), Px(r), Px(-2 * r));
}

struct LegendEntry {
  std::string name;
  std::string color;
  bool is_marker = false;
  MarkerShape shape = MarkerShape::kCircle;
  bool dashed = false;
};

std::string Legend(const std::vector<LegendEntry>& entries, double x0, double y) {
  std::string out = "<g class=\"legend\">\n";
  double x = x0;
  for (const LegendEntry& e : entries) {
    if (e.is_marker) {
      out += fmt::format("<path d=\"{}\" fill=\"{}\"/>\n", MarkerPath(e.shape, x + 8, y - 4, 5),
                         Attr(e.color));
    } else {
      out += fmt::format(
          "<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"{}\" stroke-width=\"3\"{}/>\n",
          Px(x), Px(y - 4), Px(x + 16), Px(y - 4), Attr(e.color),
          e.dashed ? " stroke-dasharray=\"4 3\"" : "");
    }
    out += Text(x + 22, y, e.name);
    // About 6.5 px per character at 12 px.
    x += 22 + 6.5 * static_cast<double>(e.name.size()) + 18;
  }
  return out + "</g>\n";
}

// Gridlines, ticks and labels for both axes of a plot area.
std::string Axes(const Scale& xs, const Scale& ys, const Axis& xa, const Axis& ya, double plot_top,
                 double plot_bottom, double plot_left, double plot_right) {
  std::string out = "<g class=\"axes\">\n";
  TickFormat xf = FormatOf(xa), yf = FormatOf(ya);
  for (double t : TicksFor(ys)) {
    double y = ys.Map(t);
    out += fmt::format("<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"{}\"/>\n",
                       Px(plot_left), Px(y), Px(plot_right), Px(y), kGridColor);
    out += Text(plot_left - 8, y + 4, yf(t), "end");
  }
  for (double t : TicksFor(xs)) {
    double x = xs.Map(t);
    out += fmt::format("<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"{}\"/>\n", Px(x),
                       Px(plot_top), Px(x), Px(plot_bottom), kGridColor);
    out += Text(x, plot_bottom + 16, xf(t), "middle");
  }
  out += fmt::format("<path d=\"M{} {}V{}H{}\" fill=\"none\" stroke=\"{}\"/>\n", Px(plot_left),
                     Px(plot_top), Px(plot_bottom), Px(plot_right), kAxisColor);
  if (!xa.label.empty()) {
    out += Text((plot_left + plot_right) / 2, plot_bottom + 38, xa.label, "middle");
  }
  if (!ya.label.empty()) {
    double cy = (plot_top + plot_bottom) / 2;
    out +=
        Text(16, cy, ya.label, "middle", fmt::format(" transform=\"rotate(-90 16 {})\"", Px(cy)));
  }
  return out + "</g>\n";
}

std::string NoData(int width, int height, const std::string& title) {
  return Open(width, height, title) +
         fmt::format(
             "<rect x=\"1\" y=\"1\" width=\"{}\" height=\"{}\" fill=\"#f9fafb\" "
             "stroke=\"{}\" rx=\"6\"/>\n",
             width - 2, height - 2, kGridColor) +
         Text(width / 2.0, height / 2.0, "no data yet", "middle") + "</svg>\n";
}

std::string Truncated(const std::string& s, size_t max_chars) {
  if (s.size() <= max_chars) return s;
  // Cut on a UTF-8 boundary.
  size_t cut = max_chars - 1;
  while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80) --cut;
  return s.substr(0, cut) + "\u2026";
}

std::string SeriesPath(const Series& s, const Scale& xs, const Scale& ys) {
  std::string d;
  for (size_t i = 0; i < s.points.size(); ++i) {
    double x = xs.Map(s.points[i].x), y = ys.Map(s.points[i].y);
    if (i == 0) {
      d += fmt::format("M{} {}", Px(x), Px(y));
    } else if (s.step) {
      d += fmt::format("H{}V{}", Px(x), Px(y));
    } else {
      d += fmt::format("L{} {}", Px(x), Px(y));
    }
  }
  return fmt::format(
      "<path d=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"2\" "
      "stroke-linejoin=\"round\"{}><title>{}</title></path>\n",
      d, Attr(s.color), s.dashed ? " stroke-dasharray=\"6 4\"" : "", EscapeHtml(s.name));
}

}  // namespace

std::string SeriesColor(size_t index) {
  static const char* const kPalette[] = {"#2563eb", "#d97706", "#059669", "#dc2626",
                                         "#7c3aed", "#0891b2", "#db2777", "#65a30d"};
  return kPalette[index % (sizeof(kPalette) / sizeof(kPalette[0]))];
}

std::string SpeedupTick(double v) {
  return fmt::format("{:.3g}x", v);
}

std::string PercentTick(double v) {
  return fmt::format("{:g}%", std::round(v * 1000) / 10);
}

std::vector<double> NiceTicks(double lo, double hi, int target) {
  std::vector<double> ticks;
  if (!(hi > lo) || target < 1) return ticks;
  double raw = (hi - lo) / target;
  double mag = std::pow(10, std::floor(std::log10(raw)));
  double step = mag;
  for (double m : {1.0, 2.0, 5.0, 10.0}) {
    step = m * mag;
    if (step >= raw) break;
  }
  double first = std::ceil(lo / step - 1e-9) * step;
  for (double t = first; t <= hi + step * 1e-9; t += step) {
    ticks.push_back(std::fabs(t) < step * 1e-9 ? 0 : t);
  }
  return ticks;
}

std::vector<double> LogTicks(double lo, double hi) {
  std::vector<double> all, powers;
  if (!(lo > 0) || !(hi > lo)) return all;
  for (int k = static_cast<int>(std::floor(std::log10(lo))); k <= std::ceil(std::log10(hi)); ++k) {
    double p = std::pow(10, k);
    for (double m : {1.0, 2.0, 5.0}) {
      double t = m * p;
      if (t < lo * (1 - 1e-9) || t > hi * (1 + 1e-9)) continue;
      all.push_back(t);
      if (m == 1.0) powers.push_back(t);
    }
  }
  return all.size() <= static_cast<size_t>(kMaxLogTicks) ? all : powers;
}

std::string Render(const LineChart& c) {
  Range xr, yr;
  size_t points = 0;
  for (const Series& s : c.series) {
    for (const Point& p : s.points) {
      xr.Add(p.x, c.x.log);
      yr.Add(p.y, c.y.log);
      ++points;
    }
  }
  for (const Marker& m : c.markers) {
    xr.Add(m.x, c.x.log);
    yr.Add(m.y, c.y.log);
  }
  if (points == 0 && c.markers.empty()) return NoData(c.width, c.height, c.title);
  if (c.y_reference) yr.Add(*c.y_reference, c.y.log);

  const double left = kMarginLeft, right = c.width - kMarginRight;
  const double top = kMarginTop, bottom = c.height - kMarginBottom;
  Scale xs = ScaleFor(c.x, xr, left, right);
  Scale ys = ScaleFor(c.y, yr, bottom, top);

  std::string out = Open(c.width, c.height, c.title);
  out += Axes(xs, ys, c.x, c.y, top, bottom, left, right);
  if (c.y_reference) {
    double y = ys.Map(*c.y_reference);
    out += fmt::format(
        "<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"{}\" stroke-dasharray=\"2 3\"/>\n",
        Px(left), Px(y), Px(right), Px(y), kReferenceColor);
  }
  std::vector<LegendEntry> legend;
  for (const Series& s : c.series) {
    if (!s.name.empty()) legend.push_back({s.name, s.color, false, {}, s.dashed});
    if (s.points.empty()) continue;
    if (s.line) out += SeriesPath(s, xs, ys);
    if (!s.dots) continue;
    for (const Point& p : s.points) {
      out += fmt::format(
          "<circle cx=\"{}\" cy=\"{}\" r=\"3.5\" fill=\"{}\" stroke=\"#fff\"><title>{}</title>"
          "</circle>\n",
          Px(xs.Map(p.x)), Px(ys.Map(p.y)), Attr(s.color), EscapeHtml(p.tooltip));
    }
  }
  std::set<std::string> marker_legends;
  for (const Marker& m : c.markers) {
    out += fmt::format("<path d=\"{}\" fill=\"{}\" stroke=\"#fff\"><title>{}</title></path>\n",
                       MarkerPath(m.shape, xs.Map(m.x), ys.Map(m.y), 6), Attr(m.color),
                       EscapeHtml(m.tooltip));
    if (!m.legend.empty() && marker_legends.insert(m.legend).second) {
      legend.push_back({m.legend, m.color, true, m.shape, false});
    }
  }
  out += Legend(legend, left, kLegendY + 4);
  return out + "</svg>\n";
}

std::string Render(const BarChart& c) {
  if (c.bars.empty()) return NoData(c.width, 120, c.title);
  Range xr;
  for (const Bar& b : c.bars) {
    for (const auto& v : b.values) {
      if (v) xr.Add(*v, c.x.log);
    }
  }
  xr.Add(c.reference, c.x.log);
  const size_t n_series = std::max<size_t>(1, c.names.size());
  const double top = kMarginTop, row = std::max<double>(
                                     c.row_height, kMinSeriesBarPx * static_cast<double>(n_series) +
                                                       kBarRowPaddingPx);
  const double height = top + row * static_cast<double>(c.bars.size()) + kMarginBottom;
  const double left = kBarLabelWidth, right = c.width - kBarValueRoom;
  const double bottom = top + row * static_cast<double>(c.bars.size());
  Scale xs = ScaleFor(c.x, xr, left, right);
  TickFormat xf = FormatOf(c.x);

  std::string out = Open(c.width, static_cast<int>(height), c.title);
  for (double t : TicksFor(xs)) {
    double x = xs.Map(t);
    out += fmt::format("<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"{}\"/>\n", Px(x),
                       Px(top), Px(x), Px(bottom), kGridColor);
    out += Text(x, bottom + 16, xf(t), "middle");
  }
  if (!c.x.label.empty()) out += Text((left + right) / 2, bottom + 36, c.x.label, "middle");
  const double ref_x = xs.Map(c.reference);
  const double bar_h = (row - kBarRowPaddingPx) / static_cast<double>(n_series);
  for (size_t i = 0; i < c.bars.size(); ++i) {
    const Bar& b = c.bars[i];
    double y0 = top + row * static_cast<double>(i);
    if (i % 2 == 1) {
      out += fmt::format("<rect x=\"0\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"#f9fafb\"/>\n",
                         Px(y0), c.width, Px(row));
    }
    std::string label = Text(left - 10, y0 + row / 2 + 4, Truncated(b.label, kMaxLabelChars), "end",
                             b.muted ? " opacity=\"0.6\"" : "");
    if (!b.href.empty()) {
      label = fmt::format("<a href=\"{}\">{}</a>", Attr(b.href), label);
    }
    out += fmt::format("<g><title>{}</title>\n{}",
                       EscapeHtml(b.tooltip.empty() ? b.label : b.tooltip), label);
    bool any = false;
    for (size_t k = 0; k < b.values.size() && k < n_series; ++k) {
      if (!b.values[k]) continue;
      any = true;
      double x = xs.Map(*b.values[k]);
      double by = y0 + 3 + bar_h * static_cast<double>(k);
      std::string color =
          b.muted ? kMutedColor : (k < c.colors.size() ? c.colors[k] : SeriesColor(k));
      out +=
          fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\" rx=\"2\"/>\n",
                      Px(std::min(x, ref_x)), Px(by), Px(std::max(1.0, std::fabs(x - ref_x))),
                      Px(bar_h - 1), Attr(color));
      out += Text(std::max(x, ref_x) + 4, by + bar_h - 2, xf(*b.values[k]), "start",
                  " font-size=\"10\"");
    }
    if (!any && !b.note.empty()) {
      // Right of the reference line, or left of it when the line is near the
      // right edge (every speedup below 1x) and the note would be cut off.
      const bool fits_right =
          ref_x + 6 + kCharWidthPx * static_cast<double>(b.note.size()) <= c.width;
      out += Text(fits_right ? ref_x + 6 : ref_x - 6, y0 + row / 2 + 4, b.note,
                  fits_right ? "start" : "end", " font-style=\"italic\" fill-opacity=\"0.7\"");
    }
    out += "</g>\n";
  }
  out += fmt::format(
      "<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"{}\" stroke-width=\"1.5\"/>\n",
      Px(ref_x), Px(top - 4), Px(ref_x), Px(bottom), kReferenceColor);
  std::vector<LegendEntry> legend;
  for (size_t k = 0; k < c.names.size(); ++k) {
    legend.push_back({c.names[k], k < c.colors.size() ? c.colors[k] : SeriesColor(k)});
  }
  out += Legend(legend, left, kLegendY + 4);
  return out + "</svg>\n";
}

std::string Render(const Histogram& c) {
  Range xr;
  size_t total = 0;
  for (const auto& set : c.samples) {
    for (double v : set) {
      xr.Add(v, c.x.log);
      ++total;
    }
  }
  if (total == 0) return NoData(c.width, c.height, c.title);
  if (c.reference) xr.Add(*c.reference, c.x.log);
  // Sturges' rule, at least 6 bins, at most max_bins.
  int bins = std::clamp(static_cast<int>(std::ceil(std::log2(static_cast<double>(total)))) + 1, 6,
                        std::max(6, c.max_bins));
  double lo = xr.lo, hi = xr.hi;
  if (hi <= lo) {
    lo = c.x.log ? lo / 2 : lo - 1;
    hi = c.x.log ? hi * 2 : hi + 1;
  }
  auto edge = [&](int i) {
    double t = static_cast<double>(i) / bins;
    return c.x.log ? std::pow(10, std::log10(lo) + t * (std::log10(hi) - std::log10(lo)))
                   : lo + t * (hi - lo);
  };
  std::vector<std::vector<int>> counts(c.samples.size(), std::vector<int>(bins, 0));
  int max_count = 0;
  for (size_t s = 0; s < c.samples.size(); ++s) {
    for (double v : c.samples[s]) {
      if (!std::isfinite(v) || (c.x.log && v <= 0)) continue;
      int b = bins - 1;
      for (int i = 0; i < bins; ++i) {
        if (v < edge(i + 1)) {
          b = i;
          break;
        }
      }
      max_count = std::max(max_count, ++counts[s][b]);
    }
  }
  const double left = kMarginLeft, right = c.width - kMarginRight;
  const double top = kMarginTop, bottom = c.height - kMarginBottom;
  Axis xa = c.x;
  xa.min = lo;
  xa.max = hi;
  Axis ya;
  ya.label = c.y_label;
  ya.include_zero = true;
  ya.min = 0;
  ya.max = std::max(1.0, std::ceil(max_count * 1.1));
  Range yr;
  yr.Add(0, false);
  yr.Add(max_count, false);
  Scale xs = ScaleFor(xa, xr, left, right);
  Scale ys = ScaleFor(ya, yr, bottom, top);
  // Whole counts only on the y axis.
  std::string out = Open(c.width, c.height, c.title);
  Axis ya_int = ya;
  ya_int.format = [](double v) {
    return std::fabs(v - std::round(v)) < 1e-9 ? fmt::format("{:g}", v) : "";
  };
  out += Axes(xs, ys, xa, ya_int, top, bottom, left, right);
  TickFormat xf = FormatOf(c.x);
  const size_t n = std::max<size_t>(1, c.samples.size());
  for (int i = 0; i < bins; ++i) {
    double x0 = xs.Map(edge(i)), x1 = xs.Map(edge(i + 1));
    double w = (x1 - x0 - 2) / static_cast<double>(n);
    for (size_t s = 0; s < c.samples.size(); ++s) {
      int count = counts[s][i];
      if (count == 0) continue;
      double y = ys.Map(count);
      std::string name = s < c.names.size() ? c.names[s] : "";
      out += fmt::format(
          "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\" rx=\"1.5\">"
          "<title>{}</title></rect>\n",
          Px(x0 + 1 + w * static_cast<double>(s)), Px(y), Px(std::max(1.0, w)), Px(bottom - y),
          Attr(s < c.colors.size() ? c.colors[s] : SeriesColor(s)),
          EscapeHtml(fmt::format("{}: {} in [{}, {})", name, count, xf(edge(i)), xf(edge(i + 1)))));
    }
  }
  if (c.reference) {
    double x = xs.Map(*c.reference);
    out += fmt::format(
        "<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"{}\" stroke-dasharray=\"2 3\"/>\n",
        Px(x), Px(top), Px(x), Px(bottom), kReferenceColor);
  }
  std::vector<LegendEntry> legend;
  for (size_t s = 0; s < c.names.size(); ++s) {
    legend.push_back({c.names[s], s < c.colors.size() ? c.colors[s] : SeriesColor(s)});
  }
  out += Legend(legend, left, kLegendY + 4);
  return out + "</svg>\n";
}

}  // namespace kforge::report::svg
