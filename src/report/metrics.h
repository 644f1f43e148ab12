// Suite metrics the way the kernel-agent papers report them (KernelBench,
// CUDA Agent): pass rate, fast_p against eager and torch.compile, geometric
// mean speedup, faster-than rates, speedup distribution, tokens and cost.
// Pure functions over per-task outcomes: `kforge bench` and `kforge report`
// both call ComputeSuiteMetrics; docs/report.md defines every number.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace kforge::report {

enum class Baseline { kEager, kCompile };
std::string_view BaselineName(Baseline baseline);  // "eager" | "compile"

// The thresholds p of fast_p (CONTRACT.md), and their JSON keys.
constexpr std::array<double, 6> kFastPThresholds = {0, 0.5, 0.8, 1, 1.5, 2};
std::string ThresholdKey(double p);  // 0 -> "0", 0.5 -> "0.5", 1 -> "1"

// What one task of a suite ended with: its best candidate (the one
// `kforge best` exports), or nothing when no candidate was accepted.
struct TaskOutcome {
  std::string task;
  std::string task_path;
  std::string run_id;  // empty when the task has no run yet
  std::string run_status;
  bool degenerate = false;
  std::string degenerate_reason;
  // The best candidate's evaluation: accepted in CONTRACT.md's sense
  // (compiled, correct, verdict not rejected, task not degenerate).
  bool accepted = false;
  std::string verdict;  // ok | suspect | rejected | "" when there is no result
  std::string candidate_id;
  std::optional<double> speedup_eager;
  std::optional<double> speedup_compile;
  int64_t evaluations = 0;
  int64_t input_tokens = 0;
  int64_t output_tokens = 0;
  double cost_usd = 0;

  std::optional<double> speedup(Baseline baseline) const {
    return baseline == Baseline::kEager ? speedup_eager : speedup_compile;
  }
};

struct MetricsOptions {
  // CONTRACT.md: a suspect result is kept and shown but left out of headline
  // numbers unless asked for.
  bool include_suspect = false;
};

// True when a result counts as a success in headline numbers: accepted, not
// on a degenerate task, and verdict ok (or suspect when include_suspect).
bool IsHeadline(bool accepted, bool degenerate, std::string_view verdict,
                const MetricsOptions& options);
bool CountsInHeadline(const TaskOutcome& outcome, const MetricsOptions& options);

// Descriptive statistics of a set of speedups. Percentiles interpolate
// linearly between order statistics (numpy's default); every field is
// nullopt when there are no values.
struct SpeedupStats {
  int64_t count = 0;
  std::optional<double> mean, median, p25, p75, min, max, geomean;
};
SpeedupStats DescribeSpeedups(std::vector<double> speedups);
// q in [0, 1] of an ascending, non-empty vector.
double Percentile(const std::vector<double>& sorted, double q);
// exp(mean(log x)); nullopt for an empty set. Every value must be > 0.
std::optional<double> GeometricMean(const std::vector<double>& values);

// The numbers against one baseline. Rates are nullopt when the suite has no
// non-degenerate task, or when no non-degenerate task has a measured speedup
// against this baseline (torch.compile unavailable everywhere).
struct BaselineMetrics {
  std::array<std::optional<double>, kFastPThresholds.size()> fast_p{};
  std::optional<double> faster_rate;  // = fast_p at p = 1
  SpeedupStats stats;                 // over headline successes with a speedup
};

struct SuiteMetrics {
  bool include_suspect = false;
  int64_t tasks_total = 0;       // every task, degenerate ones included
  int64_t tasks = 0;             // n: the non-degenerate tasks
  int64_t degenerate_tasks = 0;  // reported separately, in no rate
  int64_t accepted_tasks = 0;    // headline successes among the n
  int64_t suspect_tasks = 0;     // non-degenerate tasks whose best result is suspect
  std::optional<double> pass_rate;
  BaselineMetrics eager, compile;
  int64_t input_tokens = 0, output_tokens = 0;
  double cost_usd = 0;
  // Over tasks_total: tokens are spent on degenerate tasks too.
  std::optional<double> tokens_per_task, cost_usd_per_task;
  std::vector<std::string> degenerate;  // their names, in suite order

  const BaselineMetrics& of(Baseline b) const { return b == Baseline::kEager ? eager : compile; }
  int64_t tokens() const { return input_tokens + output_tokens; }
};

SuiteMetrics ComputeSuiteMetrics(const std::vector<TaskOutcome>& outcomes,
                                 const MetricsOptions& options);

// The fraction of the n non-degenerate tasks that are headline successes with
// a speedup above p against `baseline` (KernelBench's fast_p), for any p.
std::optional<double> FastP(const std::vector<TaskOutcome>& outcomes, Baseline baseline, double p,
                            const MetricsOptions& options);

// CONTRACT.md's `bench --json` "metrics" object ({"tasks", "pass_rate",
// "fast_p", "geomean_speedup", "faster_rate", "cost_usd", "tokens"}) plus the
// distribution, counts and per-task cost.
nlohmann::json SuiteMetricsJson(const SuiteMetrics& metrics);
nlohmann::json SpeedupStatsJson(const SpeedupStats& stats);

}  // namespace kforge::report
