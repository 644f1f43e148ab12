#include "report/report_html.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "common/files.h"
#include "report/html_text.h"
#include "report/line_diff.h"
#include "report/number_format.h"
#include "report/svg_chart.h"

namespace kforge::report {

namespace {

using nlohmann::json;

constexpr const char* kBacktrackColor = "#dc2626";
constexpr const char* kCrossoverColor = "#7c3aed";
constexpr size_t kMaxEventDetailChars = 240;
constexpr size_t kMaxProfileRows = 40;
constexpr double kSecondsPerMinute = 60;
// fast_p curves run to at least this threshold, so the contract's p = 2 shows.
constexpr double kMinFastPAxis = 2.5;
constexpr double kFastPAxisHeadroom = 1.1;
// Chart viewBox sizes: text in an SVG scales with it, so a chart's viewBox is
// about as wide as the space it gets on a laptop screen (full width or half).
constexpr int kWideChartWidth = 1000;
constexpr int kWideChartHeight = 380;
constexpr int kHalfChartWidth = 540;
constexpr int kHalfChartHeight = 320;

// No scripts, no fetches: the page cannot load anything, even by accident.
constexpr const char* kHead = R"html(<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:">
<link rel="icon" href="data:,">
)html";

constexpr const char* kCss = R"css(
:root { color-scheme: light; --fg: #111827; --muted: #6b7280; --line: #e5e7eb; --bg: #f8fafc;
  --card: #ffffff; --accent: #2563eb; --ok: #047857; --warn: #b45309; --bad: #b91c1c; }
* { box-sizing: border-box; }
body { margin: 0; background: var(--bg); color: var(--fg);
  font: 14px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; }
main { max-width: 1180px; margin: 0 auto; padding: 28px 24px 64px; }
header.page { margin-bottom: 20px; }
header.page .kicker { color: var(--muted); font-size: 12px; letter-spacing: .06em; text-transform: uppercase; }
h1 { font-size: 26px; margin: 2px 0 6px; }
h2 { font-size: 18px; margin: 32px 0 12px; padding-bottom: 6px; border-bottom: 1px solid var(--line); }
h3 { font-size: 15px; margin: 0 0 8px; }
a { color: var(--accent); text-decoration: none; }
a:hover { text-decoration: underline; }
.meta { color: var(--muted); }
.meta span + span::before { content: "·"; margin: 0 8px; color: #cbd5e1; }
.cards { display: grid; grid-template-columns: repeat(auto-fill, minmax(170px, 1fr)); gap: 12px; }
.card { background: var(--card); border: 1px solid var(--line); border-radius: 10px; padding: 12px 14px; }
.card .label { color: var(--muted); font-size: 12px; }
.card .value { font-size: 22px; font-weight: 600; font-variant-numeric: tabular-nums; }
.card .sub { color: var(--muted); font-size: 12px; }
.panel { background: var(--card); border: 1px solid var(--line); border-radius: 10px; padding: 16px; margin-bottom: 16px; }
.grid2 { display: grid; grid-template-columns: repeat(auto-fit, minmax(480px, 1fr)); gap: 16px; margin-bottom: 16px; }
.grid2 .panel { margin-bottom: 0; }
svg.chart { width: 100%; height: auto; display: block; }
.note { color: var(--muted); font-size: 12px; margin: 6px 0 0; }
table { border-collapse: collapse; width: 100%; font-variant-numeric: tabular-nums; }
th, td { text-align: left; padding: 6px 10px; border-bottom: 1px solid var(--line); vertical-align: top; }
th { font-size: 12px; color: var(--muted); font-weight: 600; background: #f9fafb; position: sticky; top: 0; }
td.num, th.num { text-align: right; }
td.time { white-space: nowrap; color: var(--muted); }
tr:hover td { background: #f9fafb; }
.scroll { overflow-x: auto; }
.badge { display: inline-block; padding: 1px 8px; border-radius: 999px; font-size: 12px; font-weight: 600;
  background: #f3f4f6; color: #374151; white-space: nowrap; }
.badge.ok { background: #d1fae5; color: var(--ok); }
.badge.suspect { background: #fef3c7; color: var(--warn); }
.badge.rejected, .badge.bad { background: #fee2e2; color: var(--bad); }
.badge.muted { background: #f3f4f6; color: var(--muted); }
code, pre { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 12.5px; }
pre { margin: 0; padding: 12px; background: #0f172a; color: #e2e8f0; border-radius: 8px; overflow: auto;
  max-height: 560px; line-height: 1.45; }
pre.diff { background: #ffffff; color: var(--fg); border: 1px solid var(--line); padding: 8px 0; }
pre.diff span { display: block; padding: 0 12px; white-space: pre; }
pre.diff .add { background: #ecfdf5; color: #065f46; }
pre.diff .del { background: #fef2f2; color: #991b1b; }
pre.diff .hunk { color: #6366f1; background: #eef2ff; }
pre.diff .file { color: var(--muted); }
details { margin: 8px 0; }
summary { cursor: pointer; font-weight: 600; color: #374151; }
section.candidate { background: var(--card); border: 1px solid var(--line); border-radius: 10px;
  padding: 16px; margin: 14px 0; scroll-margin-top: 12px; }
section.candidate:target { border-color: var(--accent); box-shadow: 0 0 0 3px #bfdbfe; }
.kv { display: grid; grid-template-columns: max-content 1fr; gap: 2px 16px; margin: 8px 0; }
.kv dt { color: var(--muted); }
.kv dd { margin: 0; font-variant-numeric: tabular-nums; }
footer { margin-top: 48px; color: var(--muted); font-size: 12px; }
)css";

std::string E(std::string_view s) {
  return EscapeHtml(s);
}

std::string CandidateAnchor(const std::string& id) {
  return "c-" + HtmlId(id);
}

std::string ShortId(const std::string& id) {
  constexpr size_t kShown = 10;
  return id.size() > kShown ? id.substr(0, kShown) : id;
}

std::string CandidateLink(const std::string& id) {
  return fmt::format("<a href=\"#{}\"><code>{}</code></a>", CandidateAnchor(id), E(ShortId(id)));
}

std::string Badge(const std::string& text, const std::string& kind) {
  return fmt::format("<span class=\"badge {}\">{}</span>", HtmlId(kind), E(text));
}

std::string VerdictBadge(const std::string& verdict) {
  if (verdict.empty()) return Badge("pending", "muted");
  return Badge(verdict, verdict);
}

// What happened to an evaluated candidate: the first failure, else its
// integrity verdict.
std::string ResultBadge(const CandidateRow& c) {
  if (!c.evaluated) return Badge("pending", "muted");
  if (!c.compiled) return Badge("compile failed", "bad");
  if (!c.correct) return Badge("incorrect", "bad");
  return VerdictBadge(c.verdict);
}

std::string Card(const std::string& label, const std::string& value, const std::string& sub = "") {
  return fmt::format(
      "<div class=\"card\"><div class=\"label\">{}</div><div class=\"value\">{}</div>{}</div>\n",
      E(label), E(value), sub.empty() ? "" : fmt::format("<div class=\"sub\">{}</div>", sub));
}

std::string Panel(const std::string& title, const std::string& body, const std::string& note = "") {
  return fmt::format("<div class=\"panel\"><h3>{}</h3>\n{}{}</div>\n", E(title), body,
                     note.empty() ? "" : fmt::format("<p class=\"note\">{}</p>", note));
}

std::string Page(const std::string& title, const std::string& body,
                 const HtmlPageOptions& options) {
  std::string generated = options.generated_at.empty() ? IsoUtcNow() : options.generated_at;
  return std::string(kHead) +
         fmt::format("<title>{}</title>\n<style>{}</style>\n</head>\n", E(title), kCss) +
         "<body>\n<main>\n" + body +
         fmt::format(
             "<footer>Generated by kforge {} at {}. Definitions of every number: "
             "docs/report.md.</footer>\n",
             E(KFORGE_VERSION), E(generated)) +
         "</main>\n</body>\n</html>\n";
}

std::string KeyValues(const std::vector<std::pair<std::string, std::string>>& rows) {
  std::string out = "<dl class=\"kv\">\n";
  for (const auto& [k, v] : rows) out += fmt::format("<dt>{}</dt><dd>{}</dd>\n", E(k), v);
  return out + "</dl>\n";
}

std::string Truncate(const std::string& s, size_t max_chars) {
  if (s.size() <= max_chars) return s;
  size_t cut = max_chars;
  while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80) --cut;
  return s.substr(0, cut) + "\u2026";
}

// The eval JSON as shown: long strings (compile logs) cut, with a note.
json CutLongStrings(const json& j) {
  if (j.is_string()) {
    const std::string& s = j.get_ref<const std::string&>();
    if (s.size() <= kMaxJsonStringChars) return j;
    return Truncate(s, kMaxJsonStringChars) +
           fmt::format(" [... {} more bytes not shown]", s.size() - kMaxJsonStringChars);
  }
  if (j.is_array()) {
    json out = json::array();
    for (const json& v : j) out.push_back(CutLongStrings(v));
    return out;
  }
  if (j.is_object()) {
    json out = json::object();
    for (auto it = j.begin(); it != j.end(); ++it) out[it.key()] = CutLongStrings(it.value());
    return out;
  }
  return j;
}

std::string DumpForPage(const json& j) {
  return j.dump(2, ' ', false, json::error_handler_t::replace);
}

// --- charts ---

std::string IslandChart(const RunReport& r) {
  svg::LineChart chart;
  chart.width = kWideChartWidth;
  chart.height = kWideChartHeight;
  chart.title = "Best speedup vs eager per island over iterations";
  chart.x.label = "iteration";
  chart.y.label = "best speedup vs eager";
  chart.y.log = true;
  chart.y.format = svg::SpeedupTick;
  chart.y_reference = 1.0;
  std::map<int64_t, const IslandProgress*> by_island;
  for (size_t i = 0; i < r.islands.size(); ++i) {
    const IslandProgress& island = r.islands[i];
    by_island[island.island] = &island;
    svg::Series s;
    s.name = fmt::format("island {}", island.island);
    s.color = svg::SeriesColor(i);
    s.step = true;
    s.dots = true;
    for (const BestPoint& p : island.points) {
      s.points.push_back(
          {static_cast<double>(p.iteration), p.speedup,
           fmt::format("island {} at iteration {}: best {} ({})", island.island, p.iteration,
                       FormatSpeedup(p.speedup), ShortId(p.candidate_id))});
    }
    chart.series.push_back(std::move(s));
  }
  // Backtrack and crossover sit on their island's line; without one, on 1x.
  for (const EventMarker& e : r.events) {
    bool backtrack = e.type == "backtrack";
    if (!backtrack && e.type != "crossover") continue;
    if (!e.iteration) continue;
    double y = 1.0;
    if (e.island) {
      auto it = by_island.find(*e.island);
      if (it != by_island.end()) {
        for (const BestPoint& p : it->second->points) {
          if (p.iteration <= *e.iteration) y = p.speedup;
        }
      }
    }
    svg::Marker m;
    m.x = static_cast<double>(*e.iteration);
    m.y = y;
    m.shape = backtrack ? svg::MarkerShape::kTriangleDown : svg::MarkerShape::kDiamond;
    m.color = backtrack ? kBacktrackColor : kCrossoverColor;
    m.legend = e.type;
    m.tooltip = fmt::format("{} on island {} at iteration {}: {}", e.type,
                            e.island ? std::to_string(*e.island) : "-", *e.iteration,
                            Truncate(e.detail_json, kMaxEventDetailChars));
    chart.markers.push_back(std::move(m));
  }
  return svg::Render(chart);
}

std::string CostChart(const std::vector<CostPoint>& cost, bool wide) {
  svg::LineChart chart;
  chart.width = wide ? kWideChartWidth : kHalfChartWidth;
  chart.height = wide ? kWideChartHeight : kHalfChartHeight;
  bool has_cost =
      std::any_of(cost.begin(), cost.end(), [](const CostPoint& p) { return p.cost_usd > 0; });
  double span = cost.empty() ? 0 : cost.back().elapsed_s;
  bool minutes = span >= 2 * kSecondsPerMinute;
  double unit = minutes ? kSecondsPerMinute : 1;
  chart.title = has_cost ? "LLM cost over time" : "LLM tokens over time";
  chart.x.label = minutes ? "minutes since start" : "seconds since start";
  chart.x.include_zero = true;
  chart.y.include_zero = true;
  chart.y.label = has_cost ? "cumulative cost (USD)" : "cumulative tokens";
  if (has_cost) chart.y.format = [](double v) { return fmt::format("${:g}", v); };
  svg::Series s;
  s.name = has_cost ? "cost" : "tokens";
  s.color = "#059669";
  s.step = true;
  if (!cost.empty()) s.points.push_back({0, 0, ""});  // nothing spent at the start
  for (const CostPoint& p : cost) {
    s.points.push_back({p.elapsed_s / unit,
                        has_cost ? p.cumulative_cost_usd : static_cast<double>(p.cumulative_tokens),
                        ""});
  }
  chart.series.push_back(std::move(s));
  return svg::Render(chart);
}

std::string SpeedupHistogram(const std::string& title, const std::vector<double>& eager,
                             const std::vector<double>& compile, const std::string& y_label) {
  svg::Histogram h;
  h.title = title;
  h.width = kHalfChartWidth;
  h.height = kHalfChartHeight;
  h.x.label = "speedup (log scale)";
  h.x.log = true;
  h.x.format = svg::SpeedupTick;
  h.y_label = y_label;
  h.names = {"vs eager", "vs torch.compile"};
  h.colors = {svg::kEagerColor, svg::kCompileColor};
  h.samples = {eager, compile};
  h.reference = 1.0;
  return svg::Render(h);
}

std::string FastPChart(const BenchReport& r) {
  svg::LineChart chart;
  chart.width = kHalfChartWidth;
  chart.height = kHalfChartHeight;
  chart.title = "fast_p: share of tasks accepted and faster than p times the baseline";
  chart.x.label = "p (speedup threshold)";
  chart.y.label = "fast_p";
  chart.y.min = 0;
  chart.y.max = 1;
  chart.y.format = svg::PercentTick;
  chart.x.min = 0;
  chart.x.format = [](double v) { return fmt::format("{:g}", v); };
  double max_speedup = kMinFastPAxis;
  for (const TaskOutcome& o : r.tasks) {
    if (!CountsInHeadline(o, r.options)) continue;
    for (Baseline b : {Baseline::kEager, Baseline::kCompile}) {
      if (auto s = o.speedup(b)) max_speedup = std::max(max_speedup, *s * kFastPAxisHeadroom);
    }
  }
  chart.x.max = max_speedup;
  for (Baseline b : {Baseline::kEager, Baseline::kCompile}) {
    if (!r.metrics.of(b).fast_p[0]) continue;  // no measurement against this baseline
    // fast_p(x) only drops at the tasks' speedups: a step-after curve through them.
    std::set<double> steps = {0.0, max_speedup};
    for (const TaskOutcome& o : r.tasks) {
      if (auto s = o.speedup(b); s && CountsInHeadline(o, r.options) && *s < max_speedup) {
        steps.insert(*s);
      }
    }
    svg::Series s;
    s.name = b == Baseline::kEager ? "vs eager" : "vs torch.compile";
    s.color = b == Baseline::kEager ? svg::kEagerColor : svg::kCompileColor;
    s.step = true;
    for (double x : steps) {
      s.points.push_back({x, FastP(r.tasks, b, x, r.options).value_or(0), ""});
    }
    chart.series.push_back(std::move(s));
    // The contract's thresholds as dots with their values.
    svg::Series dots;
    dots.color = b == Baseline::kEager ? svg::kEagerColor : svg::kCompileColor;
    dots.dots = true;
    for (size_t i = 0; i < kFastPThresholds.size(); ++i) {
      double v = r.metrics.of(b).fast_p[i].value_or(0);
      dots.points.push_back({kFastPThresholds[i], v,
                             fmt::format("fast_{} {} = {}", ThresholdKey(kFastPThresholds[i]),
                                         BaselineName(b), FormatRate(v))});
    }
    dots.line = false;
    chart.series.push_back(std::move(dots));
  }
  return svg::Render(chart);
}

std::string TaskBars(const BenchReport& r, const HtmlPageOptions& options) {
  svg::BarChart chart;
  chart.width = kWideChartWidth;
  chart.title = "Best speedup per task";
  chart.names = {"vs eager", "vs torch.compile"};
  chart.colors = {svg::kEagerColor, svg::kCompileColor};
  chart.x.log = true;
  chart.x.format = svg::SpeedupTick;
  chart.x.label = "speedup of the task's best candidate (log scale; 1x = baseline)";
  for (const TaskOutcome& o : r.tasks) {
    svg::Bar bar;
    bar.label = o.task;
    if (options.run_href && !o.run_id.empty()) bar.href = options.run_href(o.run_id);
    bool counted = CountsInHeadline(o, r.options);
    if (o.accepted && !o.degenerate) {
      bar.values = {o.speedup_eager, o.speedup_compile};
    }
    bar.muted = !counted;
    bar.note = o.degenerate       ? "degenerate (excluded)"
               : o.run_id.empty() ? "not run"
                                  : "no accepted candidate";
    bar.tooltip = fmt::format("{}: {} vs eager, {} vs compile{}", o.task,
                              FormatSpeedup(o.speedup_eager), FormatSpeedup(o.speedup_compile),
                              o.degenerate ? " (degenerate)"
                              : counted    ? ""
                                           : fmt::format(" ({}, not counted)", o.verdict));
    chart.bars.push_back(std::move(bar));
  }
  return svg::Render(chart);
}

// --- run page parts ---

std::string DiffHtml(const std::string& parent_source, const std::string& source,
                     const std::string& parent_id, const std::string& id) {
  std::vector<DiffHunk> hunks = UnifiedHunks(parent_source, source);
  if (hunks.empty()) return "<p class=\"note\">identical to its parent</p>\n";
  std::string out = "<pre class=\"diff\">";
  out += fmt::format("<span class=\"file\">--- {}</span><span class=\"file\">+++ {}</span>",
                     E(parent_id), E(id));
  for (const DiffHunk& h : hunks) {
    out += fmt::format("<span class=\"hunk\">@@ -{},{} +{},{} @@</span>", h.old_start, h.old_count,
                       h.new_start, h.new_count);
    for (const DiffLine& l : h.lines) {
      const char* cls = l.kind == DiffKind::kAdded     ? "add"
                        : l.kind == DiffKind::kRemoved ? "del"
                                                       : "ctx";
      char mark = l.kind == DiffKind::kAdded ? '+' : l.kind == DiffKind::kRemoved ? '-' : ' ';
      out += fmt::format("<span class=\"{}\">{}{}</span>", cls, mark, E(l.text));
    }
  }
  return out + "</pre>\n";
}

std::string FlagsHtml(const std::vector<FlagRow>& flags) {
  if (flags.empty()) return "<p class=\"note\">no integrity flags</p>\n";
  std::string out =
      "<table><thead><tr><th>check</th><th>severity</th><th>detail</th></tr></thead><tbody>\n";
  for (const FlagRow& f : flags) {
    out += fmt::format("<tr><td><code>{}</code></td><td>{}</td><td>{}</td></tr>\n", E(f.check),
                       Badge(f.severity, f.severity == "reject" ? "bad" : "suspect"), E(f.detail));
  }
  return out + "</tbody></table>\n";
}

// The `profile` object of the eval JSON, when there is one: its scalar
// entries, nested objects flattened one level with dotted keys.
std::string ProfileHtml(const json& eval) {
  if (!eval.is_object() || !eval.contains("profile") || eval["profile"].is_null()) return "";
  const json& profile = eval["profile"];
  std::vector<std::pair<std::string, std::string>> rows;
  auto add = [&](const std::string& key, const json& v) {
    if (rows.size() >= kMaxProfileRows) return;
    rows.emplace_back(key, E(v.is_string() ? v.get<std::string>() : DumpForPage(v)));
  };
  if (profile.is_object()) {
    for (auto it = profile.begin(); it != profile.end(); ++it) {
      if (it->is_object()) {
        for (auto jt = it->begin(); jt != it->end(); ++jt) {
          if (!jt->is_structured()) add(it.key() + "." + jt.key(), *jt);
        }
      } else if (!it->is_array()) {
        add(it.key(), *it);
      }
    }
  }
  std::string body =
      rows.empty() ? fmt::format("<pre>{}</pre>\n", E(DumpForPage(profile))) : KeyValues(rows);
  return "<h4>Profile</h4>\n" + body;
}

// The best candidate's code starts open; the others' start folded.
std::string CandidateSection(const CandidateRow& c,
                             const std::map<std::string, const CandidateRow*>& by_id,
                             bool is_best) {
  std::string out = fmt::format("<section class=\"candidate\" id=\"{}\">\n", CandidateAnchor(c.id));
  std::string status;
  if (c.evaluated) {
    status = Badge("verdict " + c.verdict, c.verdict) + " " +
             Badge(c.compiled ? "compiled" : "compile failed", c.compiled ? "ok" : "bad") + " " +
             Badge(c.correct ? "correct" : "incorrect", c.correct ? "ok" : "bad") + " " +
             Badge(c.accepted ? "accepted" : "not accepted", c.accepted ? "ok" : "muted");
  } else {
    status = Badge("not evaluated", "muted");
  }
  out += fmt::format("<h3>Candidate <code>{}</code> {}</h3>\n", E(c.id), status);
  std::string parents;
  for (const std::string& p : c.parent_ids)
    parents += (parents.empty() ? "" : ", ") + CandidateLink(p);
  out += KeyValues({
      {"iteration / island", fmt::format("{} / {}", c.iteration, c.island)},
      {"parents", parents.empty() ? "none (a seed)" : parents},
      {"format", E(c.format)},
      {"created", E(c.created_at)},
      {"speedup", fmt::format("{} vs eager, {} vs torch.compile", FormatSpeedup(c.speedup_eager),
                              FormatSpeedup(c.speedup_compile))},
      {"median time", fmt::format("candidate {}, eager {}, compile {}", FormatMs(c.candidate_ms),
                                  FormatMs(c.eager_ms), FormatMs(c.compile_ms))},
      {"speed of light", c.sol_fraction ? FormatRate(c.sol_fraction) + " of the floor" : kMissing},
      {"milestone reward", c.evaluated ? std::to_string(c.milestone) : kMissing},
  });
  if (!c.error.empty()) out += fmt::format("<p><b>error:</b> {}</p>\n", E(c.error));
  out += "<h4>Integrity flags</h4>\n" + FlagsHtml(c.flags);
  json eval = json::parse(c.eval_json, nullptr, /*allow_exceptions=*/false);
  out += ProfileHtml(eval);
  out += fmt::format("<details{}><summary>Code ({} lines)</summary>\n<pre>{}</pre></details>\n",
                     is_best ? " open" : "", SplitLines(c.source).size(), E(c.source));
  if (!c.parent_ids.empty()) {
    auto parent = by_id.find(c.parent_ids.front());
    out += fmt::format("<details><summary>Diff against parent {}</summary>\n",
                       E(ShortId(c.parent_ids.front())));
    out += parent == by_id.end()
               ? "<p class=\"note\">the parent is not in this run</p>\n"
               : DiffHtml(parent->second->source, c.source, c.parent_ids.front(), c.id);
    out += "</details>\n";
  }
  if (c.evaluated) {
    std::string shown = eval.is_discarded() ? c.eval_json : DumpForPage(CutLongStrings(eval));
    out +=
        fmt::format("<details><summary>Eval JSON</summary>\n<pre>{}</pre></details>\n", E(shown));
  }
  return out + "</section>\n";
}

std::string CandidateTable(const RunReport& r) {
  std::string out =
      "<div class=\"scroll\"><table><thead><tr><th class=\"num\">iter</th><th "
      "class=\"num\">island</th><th>candidate</th><th>parents</th><th>compiled</th><th>correct</"
      "th><th>result</th><th class=\"num\">vs eager</th><th class=\"num\">vs compile</th><th "
      "class=\"num\">time</th><th>flags</th></tr></thead><tbody>\n";
  for (const CandidateRow& c : r.candidates) {
    std::string parents;
    for (const std::string& p : c.parent_ids)
      parents += (parents.empty() ? "" : " ") + CandidateLink(p);
    std::string flags;
    for (const FlagRow& f : c.flags)
      flags +=
          (flags.empty() ? "" : " ") + Badge(f.check, f.severity == "reject" ? "bad" : "suspect");
    auto yes_no = [&](bool v) {
      return c.evaluated ? Badge(v ? "yes" : "no", v ? "ok" : "bad") : std::string(kMissing);
    };
    out += fmt::format(
        "<tr><td class=\"num\">{}</td><td class=\"num\">{}</td><td>{}</td><td>{}</td><td>{}</td>"
        "<td>{}</td><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td "
        "class=\"num\">{}</td><td>{}</td></tr>\n",
        c.iteration, c.island, CandidateLink(c.id), parents.empty() ? kMissing : parents,
        yes_no(c.compiled), yes_no(c.correct), ResultBadge(c), E(FormatSpeedup(c.speedup_eager)),
        E(FormatSpeedup(c.speedup_compile)), E(FormatMs(c.candidate_ms)), flags);
  }
  return out + "</tbody></table></div>\n";
}

std::string EventTable(const RunReport& r) {
  std::string rows;
  int64_t evaluation_events = 0;
  for (const EventMarker& e : r.events) {
    // One per evaluation: the candidate table already says all of it.
    if (e.type == "evaluation") {
      ++evaluation_events;
      continue;
    }
    rows += fmt::format(
        "<tr><td class=\"num\">{}</td><td>{}</td><td class=\"num\">{}</td><td "
        "class=\"num\">{}</td><td><code>{}</code></td><td class=\"time\">{}</td></tr>\n",
        e.seq,
        Badge(e.type, e.type == "backtrack"   ? "bad"
                      : e.type == "crossover" ? "suspect"
                                              : "muted"),
        e.island ? std::to_string(*e.island) : kMissing,
        e.iteration ? std::to_string(*e.iteration) : kMissing,
        E(Truncate(e.detail_json, kMaxEventDetailChars)), E(e.created_at));
  }
  std::string note =
      evaluation_events > 0
          ? fmt::format(
                "<p class=\"note\">{} evaluation events not listed: the candidate table "
                "shows every evaluation.</p>\n",
                evaluation_events)
          : "";
  if (rows.empty()) return "<p class=\"note\">no search events recorded</p>\n" + note;
  return "<div class=\"scroll\"><table><thead><tr><th class=\"num\">seq</th><th>type</th><th "
         "class=\"num\">island</th><th class=\"num\">iteration</th><th>detail</th><th>time</th></"
         "tr></thead><tbody>\n" +
         rows + "</tbody></table></div>\n" + note;
}

std::string SuspectNote(const MetricsOptions& options) {
  return options.include_suspect
             ? "Suspect results are included (--include-suspect)."
             : "Suspect results are shown but left out of headline numbers (CONTRACT.md).";
}

}  // namespace

std::string RenderRunHtml(const RunReport& r, const HtmlPageOptions& options) {
  const RunTotals& t = r.totals;
  std::string body = "<header class=\"page\">\n";
  if (!options.back_href.empty()) {
    body += fmt::format("<p><a href=\"{}\">&larr; {}</a></p>\n", E(options.back_href),
                        E(options.back_label.empty() ? "back" : options.back_label));
  }
  body += "<div class=\"kicker\">kforge run report</div>\n";
  body += fmt::format("<h1>{}</h1>\n", E(r.run.task_name));
  body += fmt::format(
      "<div class=\"meta\"><span>run <code>{}</code></span><span>{}</span><span>strategy "
      "{}</span><span>llm {}</span><span>device {}</span><span>{} islands</span><span>started "
      "{}</span></div>\n",
      E(r.run.id), Badge(std::string(RunStatusName(r.run.status)), "muted"), E(r.run.strategy),
      E(r.run.llm_spec), E(r.run.device), r.run.islands, E(r.run.created_at));
  body += "</header>\n<div class=\"cards\">\n";
  bool best_counts = CountsInHeadline(r.outcome, r.options);
  std::string best_sub = r.outcome.candidate_id.empty()
                             ? "no accepted candidate"
                             : CandidateLink(r.outcome.candidate_id) +
                                   (best_counts ? "" : " " + VerdictBadge(r.outcome.verdict));
  body += Card("best vs eager", FormatSpeedup(r.outcome.speedup_eager), best_sub);
  body += Card("best vs torch.compile", FormatSpeedup(r.outcome.speedup_compile), best_sub);
  body += Card("evaluations", fmt::format("{} / {}", t.evaluations, r.run.iterations_target),
               fmt::format("{} candidates", t.candidates));
  body += Card("accepted", std::to_string(t.accepted),
               fmt::format("{} compiled, {} correct, {} suspect, {} rejected", t.compiled,
                           t.correct, t.suspect, t.rejected));
  body += Card("median speedup", FormatSpeedup(t.eager.median),
               fmt::format("vs eager over {} headline candidates", t.eager.count));
  body += Card("LLM cost", FormatUsd(t.usage.cost_usd),
               fmt::format("{} calls, {} tokens", t.usage.calls,
                           FormatCount(t.usage.input_tokens + t.usage.output_tokens)));
  if (r.outcome.degenerate) {
    body += Card("task", "degenerate", E(r.outcome.degenerate_reason));
  }
  body += "</div>\n";

  body += "<h2>Progress</h2>\n";
  body += Panel("Best speedup vs eager per island", IslandChart(r),
                "Step lines: the best headline speedup each island had reached by an iteration "
                "(log scale; dashed rule = 1x). Markers: backtrack (&#9660;) and crossover "
                "(&#9670;) events; hover for details. " +
                    SuspectNote(r.options));
  std::vector<double> eager, compile;
  for (const CandidateRow& c : r.candidates) {
    if (!c.headline) continue;
    if (c.speedup_eager) eager.push_back(*c.speedup_eager);
    if (c.speedup_compile) compile.push_back(*c.speedup_compile);
  }
  body += "<div class=\"grid2\">\n";
  body += Panel("Speedup distribution of accepted candidates",
                SpeedupHistogram("Speedup distribution of accepted candidates", eager, compile,
                                 "candidates"));
  body += Panel(r.cost.empty() ? "LLM cost over time" : "LLM spend over time",
                CostChart(r.cost, /*wide=*/false),
                fmt::format("{} calls, {} input and {} output tokens.", t.usage.calls,
                            FormatCount(t.usage.input_tokens), FormatCount(t.usage.output_tokens)));
  body += "</div>\n";

  body += "<h2>Candidates</h2>\n" + CandidateTable(r);
  body += "<h2>Search events</h2>\n" + EventTable(r);

  body += "<h2>Candidate details</h2>\n";
  std::map<std::string, const CandidateRow*> by_id;
  for (const CandidateRow& c : r.candidates) by_id[c.id] = &c;
  for (const CandidateRow& c : r.candidates) {
    body += CandidateSection(c, by_id, c.id == r.outcome.candidate_id);
  }
  return Page(fmt::format("kforge run {} — {}", r.run.id, r.run.task_name), body, options);
}

std::string RenderBenchHtml(const BenchReport& r, const HtmlPageOptions& options) {
  const SuiteMetrics& m = r.metrics;
  std::string body = "<header class=\"page\">\n<div class=\"kicker\">kforge bench report</div>\n";
  body += fmt::format("<h1>{}</h1>\n", E(r.bench.suite.empty() ? r.bench.id : r.bench.suite));
  body += fmt::format(
      "<div class=\"meta\"><span>bench <code>{}</code></span><span>strategy {}</span><span>llm "
      "{}</span><span>device {}</span><span>{} evaluations per task</span><span>started "
      "{}</span></div>\n</header>\n",
      E(r.bench.id), E(r.bench.strategy), E(r.bench.llm_spec), E(r.bench.device),
      r.bench.iterations_target, E(r.bench.created_at));

  body += "<div class=\"cards\">\n";
  body += Card("pass rate", FormatRate(m.pass_rate),
               fmt::format("{} of n = {} tasks accepted", m.accepted_tasks, m.tasks));
  body += Card("fast_1 vs eager", FormatRate(m.eager.fast_p[3]), "accepted and faster than eager");
  body += Card("fast_1 vs compile", FormatRate(m.compile.fast_p[3]),
               "accepted and faster than torch.compile");
  body += Card("geomean speedup", FormatSpeedup(m.eager.stats.geomean),
               fmt::format("vs eager; {} vs compile", E(FormatSpeedup(m.compile.stats.geomean))));
  body += Card(
      "tasks", std::to_string(m.tasks_total),
      fmt::format("{} degenerate (excluded), {} suspect", m.degenerate_tasks, m.suspect_tasks));
  body += Card("LLM cost", FormatUsd(m.cost_usd),
               fmt::format("{} per task, {} tokens",
                           E(m.cost_usd_per_task ? FormatUsd(*m.cost_usd_per_task) : kMissing),
                           FormatCount(m.tokens())));
  body += "</div>\n";

  // The numbers the papers report, as a table.
  std::string table = "<div class=\"scroll\"><table><thead><tr><th>baseline</th>";
  for (double p : kFastPThresholds) {
    table += fmt::format("<th class=\"num\">fast_{}</th>", E(ThresholdKey(p)));
  }
  table +=
      "<th class=\"num\">geomean</th><th class=\"num\">mean</th><th class=\"num\">median</th>"
      "<th class=\"num\">p25</th><th class=\"num\">p75</th><th class=\"num\">max</th></tr></"
      "thead><tbody>\n";
  for (Baseline b : {Baseline::kEager, Baseline::kCompile}) {
    const BaselineMetrics& bm = m.of(b);
    table += fmt::format("<tr><td>{}</td>", b == Baseline::kEager ? "eager" : "torch.compile");
    for (const auto& f : bm.fast_p)
      table += fmt::format("<td class=\"num\">{}</td>", E(FormatRate(f)));
    for (const auto& v : {bm.stats.geomean, bm.stats.mean, bm.stats.median, bm.stats.p25,
                          bm.stats.p75, bm.stats.max}) {
      table += fmt::format("<td class=\"num\">{}</td>", E(FormatSpeedup(v)));
    }
    table += "</tr>\n";
  }
  table += "</tbody></table></div>\n";
  body += "<h2>Metrics</h2>\n";
  body += Panel("fast_p and speedup statistics", table,
                fmt::format("fast_p = share of the n = {} non-degenerate tasks that are accepted "
                            "with a speedup above p (KernelBench). Statistics are over the {} "
                            "accepted tasks. {}",
                            m.tasks, m.accepted_tasks, SuspectNote(r.options)));
  std::vector<double> eager, compile;
  for (const TaskOutcome& o : r.tasks) {
    if (!CountsInHeadline(o, r.options)) continue;
    if (o.speedup_eager) eager.push_back(*o.speedup_eager);
    if (o.speedup_compile) compile.push_back(*o.speedup_compile);
  }
  body += "<div class=\"grid2\">\n";
  body +=
      Panel("fast_p curves", FastPChart(r), "Dots mark the thresholds p = 0, 0.5, 0.8, 1, 1.5, 2.");
  body += Panel("Speedup distribution", SpeedupHistogram("Speedup distribution over accepted tasks",
                                                         eager, compile, "tasks"));
  body += "</div>\n";
  body += Panel("Best speedup per task", TaskBars(r, options),
                "Bars run from 1x to the task's best accepted speedup; grey: not counted "
                "(suspect or degenerate). Task names link to the run reports.");
  body += Panel("LLM spend over time", CostChart(r.cost, /*wide=*/true),
                "All runs of the bench together.");

  body += "<h2>Tasks</h2>\n";
  std::string rows;
  for (const TaskOutcome& o : r.tasks) {
    std::string href = options.run_href && !o.run_id.empty() ? options.run_href(o.run_id) : "";
    std::string name =
        href.empty() ? E(o.task) : fmt::format("<a href=\"{}\">{}</a>", E(href), E(o.task));
    std::string result = o.degenerate                     ? Badge("degenerate", "muted")
                         : CountsInHeadline(o, r.options) ? Badge("accepted", "ok")
                         : o.accepted                     ? VerdictBadge(o.verdict)
                                                          : Badge("none accepted", "bad");
    rows += fmt::format(
        "<tr><td>{}</td><td>{}</td><td>{}</td><td class=\"num\">{}</td><td "
        "class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td "
        "class=\"num\">{}</td><td><code>{}</code></td></tr>\n",
        name, Badge(o.run_status.empty() ? "no run" : o.run_status, "muted"), result,
        E(FormatSpeedup(o.speedup_eager)), E(FormatSpeedup(o.speedup_compile)), o.evaluations,
        E(FormatCount(o.input_tokens + o.output_tokens)), E(FormatUsd(o.cost_usd)), E(o.run_id));
  }
  body +=
      "<div class=\"scroll\"><table><thead><tr><th>task</th><th>run status</th><th>result</th><th "
      "class=\"num\">vs eager</th><th class=\"num\">vs compile</th><th "
      "class=\"num\">evaluations</th><th class=\"num\">tokens</th><th "
      "class=\"num\">cost</th><th>run</th></tr></thead><tbody>\n" +
      rows + "</tbody></table></div>\n";

  if (m.degenerate_tasks > 0) {
    body +=
        "<h2>Degenerate tasks</h2>\n<p class=\"note\">Reported separately and excluded from "
        "every rate: their reference output does not depend on the computation being "
        "optimized.</p>\n<table><thead><tr><th>task</th><th>reason</th></tr></thead><tbody>\n";
    for (const TaskOutcome& o : r.tasks) {
      if (!o.degenerate) continue;
      body += fmt::format("<tr><td>{}</td><td>{}</td></tr>\n", E(o.task),
                          E(o.degenerate_reason.empty() ? "degenerate" : o.degenerate_reason));
    }
    body += "</tbody></table>\n";
  }
  return Page(fmt::format("kforge bench {}", r.bench.id), body, options);
}

std::filesystem::path RunPagesDir(const std::filesystem::path& file) {
  return file.parent_path() / (file.stem().string() + "_runs");
}

Result<HtmlOutput> WriteHtmlReport(Store& store, ReportKind kind, const std::string& id,
                                   const std::filesystem::path& file,
                                   const MetricsOptions& options) {
  HtmlOutput out;
  out.main = file;
  HtmlPageOptions page;
  page.generated_at = IsoUtcNow();
  if (kind == ReportKind::kRun) {
    auto report = LoadRunReport(store, id, options);
    if (!report) return report.error();
    Status written = WriteFileAtomic(file, RenderRunHtml(*report, page));
    if (!written) return written.error();
    return out;
  }
  auto report = LoadBenchReport(store, id, options);
  if (!report) return report.error();
  std::filesystem::path dir = RunPagesDir(file);
  std::string dir_name = dir.filename().string();
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return Error::Io(fmt::format("cannot create {}: {}", dir.string(), ec.message()));
  HtmlPageOptions run_page = page;
  run_page.back_href = "../" + file.filename().string();
  run_page.back_label = "bench " + id;
  // One run at a time: a bench's candidates need not fit in memory together.
  for (const TaskOutcome& task : report->tasks) {
    auto run = LoadRunReport(store, task.run_id, options);
    if (!run) return run.error();
    std::filesystem::path path = dir / (HtmlId(task.run_id) + ".html");
    Status written = WriteFileAtomic(path, RenderRunHtml(*run, run_page));
    if (!written) return written.error();
    out.pages.push_back(path);
  }
  page.run_href = [dir_name](const std::string& run_id) {
    return dir_name + "/" + HtmlId(run_id) + ".html";
  };
  Status written = WriteFileAtomic(file, RenderBenchHtml(*report, page));
  if (!written) return written.error();
  return out;
}

}  // namespace kforge::report
