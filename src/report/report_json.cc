#include "report/report_json.h"

namespace kforge::report {

namespace {

using nlohmann::json;

json OptNum(const std::optional<double>& v) {
  return v ? json(*v) : json(nullptr);
}

json OptInt(const std::optional<int64_t>& v) {
  return v ? json(*v) : json(nullptr);
}

json SpeedupPair(const std::optional<double>& eager, const std::optional<double>& compile) {
  return {{"eager", OptNum(eager)}, {"compile", OptNum(compile)}};
}

// Event details are JSON the store keeps as text; shown parsed when they parse.
json ParsedOrText(const std::string& text) {
  json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  return j.is_discarded() ? json(text) : j;
}

json BestJson(const TaskOutcome& o) {
  if (o.candidate_id.empty()) return nullptr;
  return {{"candidate_id", o.candidate_id},
          {"speedup", SpeedupPair(o.speedup_eager, o.speedup_compile)},
          {"verdict", o.verdict}};
}

json CandidateJson(const CandidateRow& r) {
  json flags = json::array();
  for (const FlagRow& f : r.flags) {
    flags.push_back({{"check", f.check}, {"severity", f.severity}, {"detail", f.detail}});
  }
  return {{"candidate_id", r.id},
          {"iteration", r.iteration},
          {"island", r.island},
          {"parents", r.parent_ids},
          {"format", r.format},
          {"created_at", r.created_at},
          {"evaluated", r.evaluated},
          {"compiled", r.compiled},
          {"correct", r.correct},
          {"accepted", r.accepted},
          {"headline", r.headline},
          {"verdict", r.evaluated ? json(r.verdict) : json(nullptr)},
          {"speedup", SpeedupPair(r.speedup_eager, r.speedup_compile)},
          {"timing_ms",
           {{"candidate", OptNum(r.candidate_ms)},
            {"eager", OptNum(r.eager_ms)},
            {"compile", OptNum(r.compile_ms)}}},
          {"sol_fraction", OptNum(r.sol_fraction)},
          {"milestone", r.milestone},
          {"flags", flags},
          {"error", r.error.empty() ? json(nullptr) : json(r.error)}};
}

json CostJson(const std::vector<CostPoint>& cost, bool with_run) {
  json out = json::array();
  for (const CostPoint& p : cost) {
    json j = {{"created_at", p.created_at},
              {"elapsed_s", p.elapsed_s},
              {"stage", p.stage},
              {"cost_usd", p.cost_usd},
              {"cumulative_cost_usd", p.cumulative_cost_usd},
              {"cumulative_tokens", p.cumulative_tokens}};
    if (with_run) j["run_id"] = p.run_id;
    out.push_back(std::move(j));
  }
  return out;
}

}  // namespace

json TaskOutcomeJson(const TaskOutcome& o, const MetricsOptions& options) {
  return {{"task", o.task},
          {"task_path", o.task_path},
          {"run_id", o.run_id},
          {"status", o.run_status},
          {"best", BestJson(o)},
          {"degenerate", o.degenerate},
          {"degenerate_reason", o.degenerate ? json(o.degenerate_reason) : json(nullptr)},
          {"accepted", o.accepted},
          {"headline", CountsInHeadline(o, options)},
          {"verdict", o.verdict.empty() ? json(nullptr) : json(o.verdict)},
          {"evaluations", o.evaluations},
          {"llm",
           {{"input_tokens", o.input_tokens},
            {"output_tokens", o.output_tokens},
            {"cost_usd", o.cost_usd}}}};
}

json RunReportJson(const RunReport& r) {
  const RunTotals& t = r.totals;
  json j;
  j["kind"] = "run";
  j["run_id"] = r.run.id;
  j["status"] = RunStatusName(r.run.status);
  j["task"] = r.run.task_name;
  j["task_path"] = r.run.task_path;
  j["strategy"] = r.run.strategy;
  j["llm_spec"] = r.run.llm_spec;
  j["device"] = r.run.device;
  j["created_at"] = r.run.created_at;
  j["updated_at"] = r.run.updated_at;
  j["iterations_target"] = r.run.iterations_target;
  j["islands"] = r.run.islands;
  j["include_suspect"] = r.options.include_suspect;
  j["summary"] = {
      {"candidates", t.candidates},
      {"evaluations", t.evaluations},
      {"compiled", t.compiled},
      {"correct", t.correct},
      {"accepted", t.accepted},
      {"headline", t.headline},
      {"suspect", t.suspect},
      {"rejected", t.rejected},
      {"speedup", {{"eager", SpeedupStatsJson(t.eager)}, {"compile", SpeedupStatsJson(t.compile)}}},
      {"llm",
       {{"calls", t.usage.calls},
        {"input_tokens", t.usage.input_tokens},
        {"output_tokens", t.usage.output_tokens},
        {"cost_usd", t.usage.cost_usd}}}};
  j["outcome"] = TaskOutcomeJson(r.outcome, r.options);
  j["best"] = CountsInHeadline(r.outcome, r.options) ? BestJson(r.outcome) : json(nullptr);
  json candidates = json::array();
  for (const CandidateRow& c : r.candidates) candidates.push_back(CandidateJson(c));
  j["candidates"] = std::move(candidates);
  json islands = json::array();
  for (const IslandProgress& island : r.islands) {
    json points = json::array();
    for (const BestPoint& p : island.points) {
      points.push_back(
          {{"iteration", p.iteration}, {"speedup", p.speedup}, {"candidate_id", p.candidate_id}});
    }
    islands.push_back({{"island", island.island}, {"best", std::move(points)}});
  }
  j["island_progress"] = std::move(islands);
  json events = json::array();
  for (const EventMarker& e : r.events) {
    events.push_back({{"seq", e.seq},
                      {"type", e.type},
                      {"island", OptInt(e.island)},
                      {"iteration", OptInt(e.iteration)},
                      {"detail", ParsedOrText(e.detail_json)},
                      {"created_at", e.created_at}});
  }
  j["events"] = std::move(events);
  j["cost"] = CostJson(r.cost, /*with_run=*/false);
  return j;
}

json BenchReportJson(const BenchReport& r) {
  json j;
  j["kind"] = "bench";
  j["bench_id"] = r.bench.id;
  j["suite"] = r.bench.suite;
  j["strategy"] = r.bench.strategy;
  j["llm_spec"] = r.bench.llm_spec;
  j["device"] = r.bench.device;
  j["created_at"] = r.bench.created_at;
  j["iterations_target"] = r.bench.iterations_target;
  j["include_suspect"] = r.options.include_suspect;
  json tasks = json::array();
  for (const TaskOutcome& o : r.tasks) tasks.push_back(TaskOutcomeJson(o, r.options));
  j["tasks"] = std::move(tasks);
  j["metrics"] = SuiteMetricsJson(r.metrics);
  j["cost"] = CostJson(r.cost, /*with_run=*/true);
  return j;
}

}  // namespace kforge::report
