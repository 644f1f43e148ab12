#include "report/report_data.h"

#include <fmt/format.h>
#include <time.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>

namespace kforge::report {

namespace {

using nlohmann::json;

std::optional<double> NumberAt(const json& j, const json::json_pointer& path) {
  if (!j.contains(path)) return std::nullopt;
  const json& v = j.at(path);
  if (!v.is_number()) return std::nullopt;
  return v.get<double>();
}

bool BoolAt(const json& j, const char* key, bool fallback) {
  auto it = j.find(key);
  return it != j.end() && it->is_boolean() ? it->get<bool>() : fallback;
}

std::string StringAt(const json& j, const json::json_pointer& path) {
  if (!j.contains(path)) return "";
  const json& v = j.at(path);
  return v.is_string() ? v.get<std::string>() : "";
}

std::vector<FlagRow> FlagsOf(const json& eval) {
  std::vector<FlagRow> flags;
  const json::json_pointer path("/integrity/flags");
  if (!eval.contains(path) || !eval.at(path).is_array()) return flags;
  for (const json& f : eval.at(path)) {
    if (!f.is_object()) continue;
    flags.push_back({f.value("check", ""), f.value("severity", ""), f.value("detail", "")});
  }
  return flags;
}

// The task's result: the best headline candidate by speedup vs eager (ties:
// the earliest evaluation), else the best accepted suspect one so the report
// can show it, else nothing.
const CandidateRow* BestRow(const std::vector<CandidateRow>& rows) {
  const CandidateRow* best = nullptr;
  const CandidateRow* best_other = nullptr;
  auto better = [](const CandidateRow* current, const CandidateRow& r) {
    if (!current) return true;
    return *r.speedup_eager > *current->speedup_eager;
  };
  for (const CandidateRow& r : rows) {
    if (!r.accepted || !r.speedup_eager) continue;
    if (r.headline) {
      if (better(best, r)) best = &r;
    } else if (better(best_other, r)) {
      best_other = &r;
    }
  }
  return best ? best : best_other;
}

TaskOutcome OutcomeFromRows(const RunRecord& run, const std::vector<CandidateRow>& rows,
                            const LlmUsage& usage, const BenchRunRecord* entry) {
  TaskOutcome o;
  o.task = entry ? entry->task : run.task_name;
  o.task_path = entry && !entry->task_path.empty() ? entry->task_path : run.task_path;
  o.run_id = run.id;
  o.run_status = std::string(RunStatusName(run.status));
  if (entry && entry->degenerate) {
    o.degenerate = true;
    o.degenerate_reason = entry->degenerate_reason;
  }
  for (const CandidateRow& r : rows) {
    if (r.evaluated) ++o.evaluations;
    if (r.degenerate_task && !o.degenerate) {
      o.degenerate = true;
      o.degenerate_reason = r.degenerate_reason;
    }
  }
  if (const CandidateRow* best = BestRow(rows)) {
    o.accepted = best->accepted && !o.degenerate;
    o.verdict = best->verdict;
    o.candidate_id = best->id;
    o.speedup_eager = best->speedup_eager;
    o.speedup_compile = best->speedup_compile;
  }
  o.input_tokens = usage.input_tokens;
  o.output_tokens = usage.output_tokens;
  o.cost_usd = usage.cost_usd;
  return o;
}

std::vector<CandidateRow> RowsOf(Store& store, const std::string& run_id,
                                 const MetricsOptions& options, Status& status) {
  std::vector<CandidateRow> rows;
  auto candidates = store.CandidatesOfRun(run_id);
  if (!candidates) {
    status = candidates.error();
    return rows;
  }
  auto evaluated = store.EvaluationsOfRun(run_id);
  if (!evaluated) {
    status = evaluated.error();
    return rows;
  }
  std::map<std::string, const EvaluationRecord*> by_candidate;
  for (const EvaluatedCandidate& e : *evaluated) by_candidate[e.candidate.id] = &e.evaluation;
  // CandidatesOfRun carries no parents; EvaluationsOfRun does for evaluated ones.
  std::map<std::string, const CandidateRecord*> with_parents;
  for (const EvaluatedCandidate& e : *evaluated) with_parents[e.candidate.id] = &e.candidate;
  for (const CandidateRecord& c : *candidates) {
    auto ev = by_candidate.find(c.id);
    std::optional<EvaluationRecord> evaluation;
    if (ev != by_candidate.end()) evaluation = *ev->second;
    const CandidateRecord* full = &c;
    auto wp = with_parents.find(c.id);
    if (c.parent_ids.empty() && wp != with_parents.end()) full = wp->second;
    rows.push_back(CandidateRowOf(*full, evaluation, options));
  }
  return rows;
}

// One point per call, without the cumulative sums (see Accumulate); the
// calls' request and response texts are dropped here.
std::vector<CostPoint> CallPoints(const std::vector<LlmCallRecordRow>& calls) {
  std::vector<CostPoint> points;
  for (const LlmCallRecordRow& c : calls) {
    CostPoint p;
    p.run_id = c.run_id;
    p.created_at = c.created_at;
    p.stage = c.stage;
    p.cost_usd = c.cost_usd;
    p.cumulative_tokens = c.input_tokens + c.output_tokens;  // this call's, until Accumulate
    points.push_back(std::move(p));
  }
  return points;
}

void Accumulate(std::vector<CostPoint>& points, const std::string& start) {
  std::optional<double> t0 = ParseIsoUtc(start);
  double cost = 0;
  int64_t tokens = 0;
  for (CostPoint& p : points) {
    cost += p.cost_usd;
    tokens += p.cumulative_tokens;
    p.cumulative_cost_usd = cost;
    p.cumulative_tokens = tokens;
    std::optional<double> t = ParseIsoUtc(p.created_at);
    p.elapsed_s = t && t0 ? std::max(0.0, *t - *t0) : 0;
  }
}

RunTotals TotalsOf(const std::vector<CandidateRow>& rows, const LlmUsage& usage) {
  RunTotals t;
  std::vector<double> eager, compile;
  for (const CandidateRow& r : rows) {
    ++t.candidates;
    if (!r.evaluated) continue;
    ++t.evaluations;
    t.compiled += r.compiled;
    t.correct += r.correct;
    t.accepted += r.accepted;
    t.headline += r.headline;
    t.suspect += r.verdict == "suspect";
    t.rejected += r.verdict == "rejected";
    if (!r.headline) continue;
    if (r.speedup_eager) eager.push_back(*r.speedup_eager);
    if (r.speedup_compile) compile.push_back(*r.speedup_compile);
  }
  t.eager = DescribeSpeedups(eager);
  t.compile = DescribeSpeedups(compile);
  t.usage = usage;
  return t;
}

}  // namespace

std::optional<double> ParseIsoUtc(const std::string& timestamp) {
  tm fields{};
  int year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0;
  char frac[16] = {0};
  int n = std::sscanf(timestamp.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d.%15[0-9]", &year, &month, &day,
                      &hour, &minute, &second, frac);
  if (n < 6) return std::nullopt;
  fields.tm_year = year - 1900;
  fields.tm_mon = month - 1;
  fields.tm_mday = day;
  fields.tm_hour = hour;
  fields.tm_min = minute;
  fields.tm_sec = second;
  time_t secs = timegm(&fields);
  double fraction = n == 7 ? std::stod(std::string("0.") + frac) : 0.0;
  return static_cast<double>(secs) + fraction;
}

CandidateRow CandidateRowOf(const CandidateRecord& candidate,
                            const std::optional<EvaluationRecord>& evaluation,
                            const MetricsOptions& options) {
  CandidateRow r;
  r.id = candidate.id;
  r.iteration = candidate.iteration;
  r.island = candidate.island;
  r.parent_ids = candidate.parent_ids;
  r.format = candidate.format;
  r.created_at = candidate.created_at;
  r.source = candidate.source;
  if (!evaluation) return r;
  r.evaluated = true;
  r.accepted = evaluation->accepted;
  r.verdict = evaluation->verdict;
  r.speedup_eager = evaluation->speedup_eager;
  r.speedup_compile = evaluation->speedup_compile;
  r.eval_json = evaluation->eval_json;
  json eval = json::parse(evaluation->eval_json, nullptr, /*allow_exceptions=*/false);
  if (eval.is_object()) {
    r.compiled = BoolAt(eval, "compiled", false);
    r.correct = BoolAt(eval, "correct", false);
    r.candidate_ms = NumberAt(eval, json::json_pointer("/timing/candidate_ms/median"));
    r.eager_ms = NumberAt(eval, json::json_pointer("/timing/eager_ms/median"));
    r.compile_ms = NumberAt(eval, json::json_pointer("/timing/compile_ms/median"));
    r.sol_fraction = NumberAt(eval, json::json_pointer("/sol/fraction"));
    auto milestone = NumberAt(eval, json::json_pointer("/reward/milestone"));
    r.milestone = milestone ? static_cast<int>(*milestone) : -1;
    const json::json_pointer degenerate("/task/degenerate");
    r.degenerate_task = eval.contains(degenerate) && eval.at(degenerate).is_boolean() &&
                        eval.at(degenerate).get<bool>();
    r.degenerate_reason = StringAt(eval, json::json_pointer("/task/degenerate_reason"));
    r.flags = FlagsOf(eval);
    r.error = StringAt(eval, json::json_pointer("/error"));
  } else {
    // The indexed columns still say what happened; only details are lost.
    r.compiled = r.accepted;
    r.correct = r.accepted;
    r.error = "the stored evaluation JSON does not parse";
  }
  r.headline = IsHeadline(r.accepted, r.degenerate_task, r.verdict, options);
  return r;
}

std::vector<IslandProgress> BestPerIsland(const std::vector<CandidateRow>& rows) {
  std::map<int64_t, IslandProgress> islands;
  for (const CandidateRow& r : rows) {
    if (!r.evaluated) continue;
    IslandProgress& p = islands[r.island];
    p.island = r.island;
    std::optional<BestPoint> best;
    if (!p.points.empty()) best = p.points.back();
    if (r.headline && r.speedup_eager && (!best || *r.speedup_eager > best->speedup)) {
      best = BestPoint{r.iteration, *r.speedup_eager, r.id};
    }
    if (!best) continue;
    best->iteration = r.iteration;
    if (!p.points.empty() && p.points.back().iteration == r.iteration) {
      p.points.back() = *best;
    } else {
      p.points.push_back(*best);
    }
  }
  std::vector<IslandProgress> out;
  for (auto& [island, progress] : islands) out.push_back(std::move(progress));
  return out;
}

Result<ReportKind> ResolveReportId(Store& store, const std::string& id) {
  auto run = store.GetRun(id);
  if (run) return ReportKind::kRun;
  if (run.error().kind != ErrorKind::kNotFound) return run.error();
  auto bench = store.GetBench(id);
  if (bench) return ReportKind::kBench;
  if (bench.error().kind != ErrorKind::kNotFound) return bench.error();
  return Error::NotFound(fmt::format("no run or bench '{}' in {}", id, store.location()));
}

Result<RunReport> LoadRunReport(Store& store, const std::string& run_id,
                                const MetricsOptions& options) {
  RunReport report;
  report.options = options;
  auto run = store.GetRun(run_id);
  if (!run) return run.error();
  report.run = *run;
  Status status;
  report.candidates = RowsOf(store, run_id, options, status);
  if (!status) return status.error();
  report.islands = BestPerIsland(report.candidates);
  auto events = store.EventsOfRun(run_id);
  if (!events) return events.error();
  for (const EventRecord& e : *events) {
    report.events.push_back({e.seq, e.type, e.island, e.iteration, e.detail_json, e.created_at});
  }
  auto calls = store.LlmCallsOfRun(run_id);
  if (!calls) return calls.error();
  report.cost = CallPoints(*calls);
  Accumulate(report.cost, report.run.created_at);
  auto usage = store.LlmUsageOfRun(run_id);
  if (!usage) return usage.error();
  report.totals = TotalsOf(report.candidates, *usage);
  report.outcome = OutcomeFromRows(report.run, report.candidates, *usage, nullptr);
  return report;
}

Result<TaskOutcome> TaskOutcomeOfRun(Store& store, const std::string& run_id,
                                     const MetricsOptions& options, const BenchRunRecord* entry) {
  auto run = store.GetRun(run_id);
  if (!run) return run.error();
  Status status;
  std::vector<CandidateRow> rows = RowsOf(store, run_id, options, status);
  if (!status) return status.error();
  auto usage = store.LlmUsageOfRun(run_id);
  if (!usage) return usage.error();
  return OutcomeFromRows(*run, rows, *usage, entry);
}

Result<BenchReport> LoadBenchReport(Store& store, const std::string& bench_id,
                                    const MetricsOptions& options) {
  BenchReport report;
  report.options = options;
  auto bench = store.GetBench(bench_id);
  if (!bench) return bench.error();
  report.bench = *bench;
  auto entries = store.ListBenchRuns(bench_id);
  if (!entries) return entries.error();
  for (const BenchRunRecord& entry : *entries) {
    auto outcome = TaskOutcomeOfRun(store, entry.run_id, options, &entry);
    if (!outcome) return outcome.error();
    report.tasks.push_back(std::move(*outcome));
    auto run_calls = store.LlmCallsOfRun(entry.run_id);
    if (!run_calls) return run_calls.error();
    std::vector<CostPoint> points = CallPoints(*run_calls);
    report.cost.insert(report.cost.end(), points.begin(), points.end());
  }
  std::stable_sort(
      report.cost.begin(), report.cost.end(),
      [](const CostPoint& a, const CostPoint& b) { return a.created_at < b.created_at; });
  Accumulate(report.cost, report.bench.created_at);
  report.metrics = ComputeSuiteMetrics(report.tasks, options);
  return report;
}

}  // namespace kforge::report
