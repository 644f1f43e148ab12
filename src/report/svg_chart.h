// Inline SVG charts for the HTML report: line/step charts with markers,
// horizontal bars around a reference value, and histograms. Output is a
// complete <svg> element with a viewBox (it scales with its container),
// <title> tooltips and no scripts, fonts or external references.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace kforge::report::svg {

constexpr const char* kEagerColor = "#2563eb";
constexpr const char* kCompileColor = "#d97706";
constexpr const char* kMutedColor = "#9ca3af";
// A distinct color per island / series index (cycles).
std::string SeriesColor(size_t index);

using TickFormat = std::function<std::string(double)>;
std::string SpeedupTick(double v);  // "1.5x"
std::string PercentTick(double v);  // 0.4 -> "40%"

struct Axis {
  std::string label;
  bool log = false;                // log10 scale; non-positive values are left out
  std::optional<double> min, max;  // fixed ends instead of the data's range
  bool include_zero = false;       // linear axes: stretch the range to 0
  TickFormat format;               // default "{:g}"
};

struct Point {
  double x = 0, y = 0;
  std::string tooltip;  // shown on hover when the series has dots
};

struct Series {
  std::string name;
  std::string color;
  std::vector<Point> points;
  bool step = false;  // horizontal, then vertical (a step-after function)
  bool dashed = false;
  bool dots = false;  // a circle with a tooltip at every point
  bool line = true;   // false: dots only
};

enum class MarkerShape { kCircle, kTriangleDown, kDiamond, kSquare };

struct Marker {
  double x = 0, y = 0;
  MarkerShape shape = MarkerShape::kCircle;
  std::string color;
  std::string tooltip;
  std::string legend;  // markers with the same legend text share one legend entry
};

struct LineChart {
  std::string title;  // aria-label
  Axis x, y;
  std::vector<Series> series;
  std::vector<Marker> markers;
  std::optional<double> y_reference;  // a dashed horizontal rule (e.g. 1x)
  int width = 760;
  int height = 340;
};

// One row of a horizontal bar chart: one bar per series, drawn from the
// reference value to the bar's value (left of it for values below).
struct Bar {
  std::string label;
  std::string href;  // the label links here when set
  std::vector<std::optional<double>> values;
  std::string note;  // written in place of missing values ("degenerate", ...)
  bool muted = false;
  std::string tooltip;
};

struct BarChart {
  std::string title;
  std::vector<std::string> names, colors;  // one per series
  std::vector<Bar> bars;
  Axis x;  // usually log, speedups
  double reference = 1;
  int width = 760;
  int row_height = 24;
};

struct Histogram {
  std::string title;
  Axis x;
  std::string y_label = "count";
  std::vector<std::string> names, colors;  // one per sample set
  std::vector<std::vector<double>> samples;
  std::optional<double> reference;  // a dashed vertical rule
  int max_bins = 24;
  int width = 760;
  int height = 300;
};

std::string Render(const LineChart& chart);
std::string Render(const BarChart& chart);
std::string Render(const Histogram& chart);

// Round ticks (1, 2, 5 × 10^k steps) covering [lo, hi], about `target` of them.
std::vector<double> NiceTicks(double lo, double hi, int target);
// 1, 2, 5 × 10^k within [lo, hi] (only powers of ten when that gives too many).
std::vector<double> LogTicks(double lo, double hi);

}  // namespace kforge::report::svg
