// What a report shows, read from the store: the measurement half of
// `kforge report`. A run report lists every candidate with its evaluation,
// the best speedup per island over iterations, the events and the LLM cost
// over time; a bench report has one TaskOutcome per task and the suite
// metrics. The printers (report_text, report_json, report_csv, report_html)
// only render these structs.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/result.h"
#include "report/metrics.h"
#include "store/store.h"

namespace kforge::report {

struct FlagRow {
  std::string check;
  std::string severity;  // warn | reject
  std::string detail;
};

// One candidate and its evaluation (the eval JSON parsed at this edge).
struct CandidateRow {
  std::string id;
  int64_t iteration = 0;
  int64_t island = 0;
  std::vector<std::string> parent_ids;
  std::string format;
  std::string created_at;
  bool evaluated = false;
  bool compiled = false;
  bool correct = false;
  bool accepted = false;
  bool headline = false;  // counts in headline numbers (see CountsInHeadline)
  std::string verdict;    // empty when not evaluated
  std::optional<double> speedup_eager, speedup_compile;
  std::optional<double> candidate_ms, eager_ms, compile_ms;  // medians
  std::optional<double> sol_fraction;
  int milestone = -1;
  bool degenerate_task = false;
  std::string degenerate_reason;
  std::vector<FlagRow> flags;
  std::string error;  // the evaluation's error, empty when none
  std::string source;
  std::string eval_json;  // as stored: the full `kforge eval --json` object
};

// The best headline speedup vs eager an island had reached by an iteration.
struct BestPoint {
  int64_t iteration = 0;
  double speedup = 0;
  std::string candidate_id;
};
struct IslandProgress {
  int64_t island = 0;
  std::vector<BestPoint> points;  // one per evaluated iteration once a best exists
};

struct EventMarker {
  int64_t seq = 0;
  std::string type;
  std::optional<int64_t> island;
  std::optional<int64_t> iteration;
  std::string detail_json;
  std::string created_at;
};

// The LLM spend after each call.
struct CostPoint {
  std::string run_id;
  std::string created_at;
  double elapsed_s = 0;  // since the run (or bench) was created
  std::string stage;
  double cost_usd = 0;  // this call
  double cumulative_cost_usd = 0;
  int64_t cumulative_tokens = 0;
};

struct RunTotals {
  int64_t candidates = 0;
  int64_t evaluations = 0;
  int64_t compiled = 0;
  int64_t correct = 0;
  int64_t accepted = 0;  // CONTRACT.md's accepted (suspect included)
  int64_t headline = 0;  // accepted and counting in headline numbers
  int64_t suspect = 0;
  int64_t rejected = 0;
  SpeedupStats eager, compile;  // over headline candidates
  LlmUsage usage;
};

struct RunReport {
  RunRecord run;
  MetricsOptions options;
  std::vector<CandidateRow> candidates;  // by iteration, then creation
  std::vector<IslandProgress> islands;   // by island
  std::vector<EventMarker> events;       // by seq
  std::vector<CostPoint> cost;           // by call order
  RunTotals totals;
  TaskOutcome outcome;  // the run as one task of a suite
};

struct BenchReport {
  BenchRecord bench;
  MetricsOptions options;
  std::vector<TaskOutcome> tasks;  // suite order
  SuiteMetrics metrics;
  std::vector<CostPoint> cost;  // every run's calls, by time
};

enum class ReportKind { kRun, kBench };
// Whether `id` names a run or a bench; kNotFound naming the database when neither.
Result<ReportKind> ResolveReportId(Store& store, const std::string& id);

Result<RunReport> LoadRunReport(Store& store, const std::string& run_id,
                                const MetricsOptions& options);
Result<BenchReport> LoadBenchReport(Store& store, const std::string& bench_id,
                                    const MetricsOptions& options);

// One run as a task of a suite: its best candidate by speedup vs eager among
// headline successes (else the best suspect one, shown but not counted), its
// LLM usage, and whether the task is degenerate (the bench said so, or an
// evaluation did). `entry` may be null for a run outside a bench. `bench
// run` calls this for every task it finished, then ComputeSuiteMetrics.
Result<TaskOutcome> TaskOutcomeOfRun(Store& store, const std::string& run_id,
                                     const MetricsOptions& options,
                                     const BenchRunRecord* entry = nullptr);

// Parses a stored evaluation (exposed for tests).
CandidateRow CandidateRowOf(const CandidateRecord& candidate,
                            const std::optional<EvaluationRecord>& evaluation,
                            const MetricsOptions& options);
// Best headline speedup per island, one point per evaluated iteration.
std::vector<IslandProgress> BestPerIsland(const std::vector<CandidateRow>& rows);
// Seconds since the Unix epoch of an IsoUtc() timestamp; nullopt when malformed.
std::optional<double> ParseIsoUtc(const std::string& timestamp);

}  // namespace kforge::report
