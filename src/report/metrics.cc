#include "report/metrics.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <numeric>

namespace kforge::report {

namespace {

using nlohmann::json;

constexpr const char* kSuspectVerdict = "suspect";

json OptNum(const std::optional<double>& v) {
  return v ? json(*v) : json(nullptr);
}

std::optional<double> Ratio(int64_t part, int64_t whole) {
  if (whole <= 0) return std::nullopt;
  return static_cast<double>(part) / static_cast<double>(whole);
}

// Tasks that enter the rates: the non-degenerate ones.
std::vector<const TaskOutcome*> Eligible(const std::vector<TaskOutcome>& outcomes) {
  std::vector<const TaskOutcome*> out;
  for (const TaskOutcome& o : outcomes) {
    if (!o.degenerate) out.push_back(&o);
  }
  return out;
}

bool HasAnySpeedup(const std::vector<const TaskOutcome*>& eligible, Baseline baseline) {
  return std::any_of(eligible.begin(), eligible.end(),
                     [&](const TaskOutcome* o) { return o->speedup(baseline).has_value(); });
}

BaselineMetrics ComputeBaseline(const std::vector<TaskOutcome>& outcomes, Baseline baseline,
                                const MetricsOptions& options) {
  BaselineMetrics m;
  std::vector<const TaskOutcome*> eligible = Eligible(outcomes);
  std::vector<double> speedups;
  for (const TaskOutcome* o : eligible) {
    auto s = o->speedup(baseline);
    if (CountsInHeadline(*o, options) && s) speedups.push_back(*s);
  }
  m.stats = DescribeSpeedups(speedups);
  if (eligible.empty() || !HasAnySpeedup(eligible, baseline)) return m;
  for (size_t i = 0; i < kFastPThresholds.size(); ++i) {
    m.fast_p[i] = FastP(outcomes, baseline, kFastPThresholds[i], options);
  }
  m.faster_rate = FastP(outcomes, baseline, 1.0, options);
  return m;
}

json BaselineJsonField(const SuiteMetrics& m,
                       const std::function<json(const BaselineMetrics&)>& field) {
  return {{"eager", field(m.eager)}, {"compile", field(m.compile)}};
}

}  // namespace

std::string_view BaselineName(Baseline baseline) {
  return baseline == Baseline::kEager ? "eager" : "compile";
}

std::string ThresholdKey(double p) {
  // {:g} writes 0, 0.5, 0.8, 1, 1.5, 2: the keys CONTRACT.md uses.
  return fmt::format("{:g}", p);
}

bool IsHeadline(bool accepted, bool degenerate, std::string_view verdict,
                const MetricsOptions& options) {
  if (degenerate || !accepted) return false;
  if (verdict == kSuspectVerdict) return options.include_suspect;
  return verdict != "rejected";
}

bool CountsInHeadline(const TaskOutcome& outcome, const MetricsOptions& options) {
  return IsHeadline(outcome.accepted, outcome.degenerate, outcome.verdict, options);
}

double Percentile(const std::vector<double>& sorted, double q) {
  if (sorted.size() == 1) return sorted[0];
  double pos = q * static_cast<double>(sorted.size() - 1);
  size_t lo = static_cast<size_t>(std::floor(pos));
  size_t hi = std::min(lo + 1, sorted.size() - 1);
  double frac = pos - static_cast<double>(lo);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * frac;
}

std::optional<double> GeometricMean(const std::vector<double>& values) {
  if (values.empty()) return std::nullopt;
  double log_sum = 0;
  for (double v : values) log_sum += std::log(v);
  return std::exp(log_sum / static_cast<double>(values.size()));
}

SpeedupStats DescribeSpeedups(std::vector<double> speedups) {
  SpeedupStats s;
  // A speedup is a ratio of positive times; anything else is not a measurement.
  speedups.erase(std::remove_if(speedups.begin(), speedups.end(),
                                [](double v) { return !(v > 0) || !std::isfinite(v); }),
                 speedups.end());
  s.count = static_cast<int64_t>(speedups.size());
  if (speedups.empty()) return s;
  std::sort(speedups.begin(), speedups.end());
  s.mean =
      std::accumulate(speedups.begin(), speedups.end(), 0.0) / static_cast<double>(speedups.size());
  s.median = Percentile(speedups, 0.5);
  s.p25 = Percentile(speedups, 0.25);
  s.p75 = Percentile(speedups, 0.75);
  s.min = speedups.front();
  s.max = speedups.back();
  s.geomean = GeometricMean(speedups);
  return s;
}

std::optional<double> FastP(const std::vector<TaskOutcome>& outcomes, Baseline baseline, double p,
                            const MetricsOptions& options) {
  std::vector<const TaskOutcome*> eligible = Eligible(outcomes);
  int64_t fast = 0;
  for (const TaskOutcome* o : eligible) {
    auto s = o->speedup(baseline);
    if (CountsInHeadline(*o, options) && s && *s > p) ++fast;
  }
  return Ratio(fast, static_cast<int64_t>(eligible.size()));
}

SuiteMetrics ComputeSuiteMetrics(const std::vector<TaskOutcome>& outcomes,
                                 const MetricsOptions& options) {
  SuiteMetrics m;
  m.include_suspect = options.include_suspect;
  m.tasks_total = static_cast<int64_t>(outcomes.size());
  for (const TaskOutcome& o : outcomes) {
    m.input_tokens += o.input_tokens;
    m.output_tokens += o.output_tokens;
    m.cost_usd += o.cost_usd;
    if (o.degenerate) {
      ++m.degenerate_tasks;
      m.degenerate.push_back(o.task);
      continue;
    }
    ++m.tasks;
    if (CountsInHeadline(o, options)) ++m.accepted_tasks;
    if (o.accepted && o.verdict == kSuspectVerdict) ++m.suspect_tasks;
  }
  m.pass_rate = Ratio(m.accepted_tasks, m.tasks);
  m.eager = ComputeBaseline(outcomes, Baseline::kEager, options);
  m.compile = ComputeBaseline(outcomes, Baseline::kCompile, options);
  if (m.tasks_total > 0) {
    m.tokens_per_task = static_cast<double>(m.tokens()) / static_cast<double>(m.tasks_total);
    m.cost_usd_per_task = m.cost_usd / static_cast<double>(m.tasks_total);
  }
  return m;
}

json SpeedupStatsJson(const SpeedupStats& s) {
  return {{"count", s.count},     {"mean", OptNum(s.mean)},      {"median", OptNum(s.median)},
          {"p25", OptNum(s.p25)}, {"p75", OptNum(s.p75)},        {"min", OptNum(s.min)},
          {"max", OptNum(s.max)}, {"geomean", OptNum(s.geomean)}};
}

json SuiteMetricsJson(const SuiteMetrics& m) {
  json j;
  j["tasks"] = m.tasks;
  j["tasks_total"] = m.tasks_total;
  j["degenerate_tasks"] = m.degenerate_tasks;
  j["accepted_tasks"] = m.accepted_tasks;
  j["suspect_tasks"] = m.suspect_tasks;
  j["include_suspect"] = m.include_suspect;
  j["pass_rate"] = OptNum(m.pass_rate);
  j["fast_p"] = BaselineJsonField(m, [](const BaselineMetrics& b) {
    json by_p = json::object();
    for (size_t i = 0; i < kFastPThresholds.size(); ++i) {
      by_p[ThresholdKey(kFastPThresholds[i])] = OptNum(b.fast_p[i]);
    }
    return by_p;
  });
  j["geomean_speedup"] =
      BaselineJsonField(m, [](const BaselineMetrics& b) { return OptNum(b.stats.geomean); });
  j["faster_rate"] =
      BaselineJsonField(m, [](const BaselineMetrics& b) { return OptNum(b.faster_rate); });
  j["speedup"] =
      BaselineJsonField(m, [](const BaselineMetrics& b) { return SpeedupStatsJson(b.stats); });
  j["cost_usd"] = m.cost_usd;
  j["tokens"] = m.tokens();
  j["input_tokens"] = m.input_tokens;
  j["output_tokens"] = m.output_tokens;
  j["tokens_per_task"] = OptNum(m.tokens_per_task);
  j["cost_usd_per_task"] = OptNum(m.cost_usd_per_task);
  j["degenerate"] = m.degenerate;
  return j;
}

}  // namespace kforge::report
