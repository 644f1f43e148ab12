#include "report/report_fixture.h"

#include <fmt/format.h>

#include <optional>
#include <vector>

#include <nlohmann/json.hpp>

namespace kforge::report::fixture {

namespace {

using nlohmann::json;

#define FIXTURE_CHECK(expr)                                    \
  do {                                                         \
    auto fixture_status_ = (expr);                             \
    if (!fixture_status_.ok()) return fixture_status_.error(); \
  } while (0)

struct Outcome {
  bool compiled = true;
  bool correct = true;
  bool accepted = true;
  std::string verdict = "ok";
  std::optional<double> eager, compile;
  json flags = json::array();
  bool degenerate = false;
  std::string error;
  json profile;  // null: none
};

json Timing(double median_ms) {
  return {{"median", median_ms},     {"mean", median_ms * 1.01},
          {"p10", median_ms * 0.98}, {"p90", median_ms * 1.04},
          {"samples", 60},           {"rel_stddev", 0.012}};
}

std::string EvalJson(const std::string& task, const std::string& candidate_id, const Outcome& o) {
  constexpr double kEagerMs = 2.0;
  constexpr double kCompileMs = 1.45;
  bool timed = o.accepted && o.eager;
  json j;
  j["kforge_version"] = "0.1.0";
  j["task"] = {{"name", task},
               {"path", "tasks/" + task + ".py"},
               {"degenerate", o.degenerate},
               {"degenerate_reason",
                o.degenerate ? json("the output is all zeros whatever the input") : json(nullptr)}};
  j["candidate"] = {{"path", candidate_id + ".py"}, {"format", "cpp"}, {"sha256", candidate_id}};
  j["device"] = {{"kind", "cpu"}, {"name", "synthetic CPU"}, {"index", 0}};
  j["policy"] = "strict";
  j["compiled"] = o.compiled;
  j["compile"] = {{"seconds", 3.2},
                  {"cached", false},
                  {"log", o.compiled ? "" : "error: expected ';' before '}' token"}};
  j["correct"] = o.correct;
  j["correctness"] = {{"trials", 5},
                      {"max_abs_err", o.correct ? 1e-6 : 0.5},
                      {"max_rel_err", o.correct ? 2e-6 : 1.0},
                      {"detail", nullptr}};
  j["timing"] = {{"candidate_ms", timed ? Timing(kEagerMs / *o.eager) : json(nullptr)},
                 {"eager_ms", Timing(kEagerMs)},
                 {"compile_ms", Timing(kCompileMs)}};
  j["speedup"] = {{"eager", timed ? json(*o.eager) : json(nullptr)},
                  {"compile", timed && o.compile ? json(*o.compile) : json(nullptr)}};
  j["sol"] = {{"floor_ms", 0.25},
              {"fraction", timed ? json(0.25 / (kEagerMs / *o.eager)) : json(nullptr)}};
  j["integrity"] = {{"verdict", o.verdict}, {"flags", o.flags}};
  j["accepted"] = o.accepted;
  int milestone = !o.accepted                        ? -1
                  : (o.compile && *o.compile > 1.05) ? 3
                  : (*o.eager > 1.05)                ? 2
                                                     : 1;
  j["reward"] = {{"milestone", milestone},
                 {"speedup_compile", timed && o.compile ? json(*o.compile) : json(nullptr)}};
  j["error"] = o.error.empty() ? json(nullptr) : json(o.error);
  if (!o.profile.is_null()) j["profile"] = o.profile;
  return j.dump();
}

std::string Minute(const std::string& day, int minute) {
  return fmt::format("{}T10:{:02}:00.000000Z", day, minute);
}

Result<std::string> AddCall(Store& store, const std::string& run_id, const std::string& stage,
                            const std::string& created_at, double cost, int64_t in_tokens,
                            int64_t out_tokens) {
  LlmCallRecordRow call;
  call.run_id = run_id;
  call.stage = stage;
  call.model_spec = "openai:synthetic-model";
  call.request_hash = RandomHexId();
  call.request_json = "{}";
  call.response_json = "{}";
  call.text = "synthetic reply";
  call.input_tokens = in_tokens;
  call.output_tokens = out_tokens;
  call.latency_ms = 900;
  call.cost_usd = cost;
  call.status = "ok";
  call.created_at = created_at;
  auto recorded = store.RecordLlmCall(call);
  if (!recorded) return recorded.error();
  return recorded->id;
}

struct CandidateSpec {
  std::string id;
  int64_t iteration;
  int64_t island;
  std::vector<std::string> parents;
  std::string source;
  std::optional<Outcome> outcome;  // nullopt: not evaluated yet
};

Status AddCandidates(Store& store, const std::string& run_id, const std::string& task,
                     const std::string& day, const std::vector<CandidateSpec>& specs) {
  for (const CandidateSpec& s : specs) {
    auto call = AddCall(store, run_id, "propose", Minute(day, static_cast<int>(s.iteration) + 1),
                        0.0125 * static_cast<double>(s.iteration + 1), 1800, 650);
    if (!call) return call.error();
    CandidateRecord c;
    c.id = s.id;
    c.run_id = run_id;
    c.sha256 = "sha-" + s.id;
    c.source = s.source;
    c.format = "cpp";
    c.parent_ids = s.parents;
    c.island = s.island;
    c.iteration = s.iteration;
    c.llm_call_id = *call;
    c.created_at = Minute(day, static_cast<int>(s.iteration) + 1);
    auto added = store.AddCandidate(c);
    if (!added) return added.error();
    if (!s.outcome) {
      FIXTURE_CHECK(store.EnqueueJob(run_id, s.id));
      continue;
    }
    EvaluationRecord e;
    e.candidate_id = s.id;
    e.eval_json = EvalJson(task, s.id, *s.outcome);
    e.accepted = s.outcome->accepted;
    if (s.outcome->accepted) {
      e.speedup_eager = s.outcome->eager;
      e.speedup_compile = s.outcome->compile;
    }
    e.verdict = s.outcome->verdict;
    FIXTURE_CHECK(store.RecordEvaluation(e));
    EventRecord ev;
    ev.run_id = run_id;
    ev.type = "evaluation";
    ev.island = s.island;
    ev.iteration = s.iteration;
    ev.detail_json = json{{"candidate_id", s.id}}.dump();
    ev.created_at = Minute(day, static_cast<int>(s.iteration) + 2);
    FIXTURE_CHECK(store.RecordEvent(ev));
  }
  return Status::Ok();
}

std::string Source(int version, const std::string& body) {
  return fmt::format(
      "import torch\n"
      "from torch.utils.cpp_extension import load_inline\n"
      "\n"
      "CPP = r'''\n"
      "#include <torch/extension.h>\n"
      "torch::Tensor forward(torch::Tensor x) {{\n"
      "  auto out = torch::empty_like(x);\n"
      "  const float* in = x.data_ptr<float>();\n"
      "  float* o = out.data_ptr<float>();\n"
      "{}"
      "  return out;\n"
      "}}\n"
      "'''\n"
      "\n"
      "# version {}\n"
      "module = load_inline('softmax_v{}', cpp_sources=CPP, functions=['forward'])\n"
      "\n"
      "class ModelNew(torch.nn.Module):\n"
      "    def forward(self, x):\n"
      "        return module.forward(x)\n",
      body, version, version);
}

Outcome Accepted(double eager, double compile) {
  Outcome o;
  o.eager = eager;
  o.compile = compile;
  return o;
}

Outcome Failed(bool compiled, const std::string& error) {
  Outcome o;
  o.compiled = compiled;
  o.correct = false;
  o.accepted = false;
  o.error = error;
  return o;
}

json Flag(const std::string& check, const std::string& severity, const std::string& detail) {
  return {{"check", check}, {"severity", severity}, {"detail", detail}};
}

RunRecord Run(const std::string& id, const std::string& task, const std::string& created_at,
              int64_t islands, int64_t iterations) {
  RunRecord run;
  run.id = id;
  run.created_at = created_at;
  run.task_name = task;
  run.task_path = "tasks/" + task + ".py";
  run.task_hash = "hash-" + task;
  run.strategy = "pacevolve";
  run.llm_spec = "openai:synthetic-model";
  run.device = "cpu";
  run.iterations_target = iterations;
  run.seed = 1;
  run.islands = islands;
  return run;
}

Status WriteRun(Store& store) {
  const std::string day = "2026-03-01";
  auto id = store.CreateRun(Run(kRunId, "23_Softmax", Minute(day, 0), 2, 12));
  if (!id) return id.error();
  const std::string loop = "  for (int64_t i = 0; i < x.numel(); ++i) o[i] = in[i];\n";
  const std::string parallel =
      "  at::parallel_for(0, x.size(0), 16, [&](int64_t b, int64_t e) {\n"
      "    for (int64_t r = b; r < e; ++r) softmax_row(in, o, r, x.size(1));\n"
      "  });\n";
  const std::string hostile =
      "  // </pre><script>alert('not escaped')</script> & <b>bold</b> \xff\xfe bytes\n";

  Outcome suspect = Accepted(3.2, 2.4);
  suspect.verdict = "suspect";
  suspect.flags.push_back(Flag("timing_outlier", "warn",
                               "speedup above eval.integrity.suspect_speedup; re-timed twice"));
  Outcome rejected = Failed(true, "");
  rejected.correct = true;
  rejected.verdict = "rejected";
  rejected.flags.push_back(
      Flag("side_stream", "reject", "work launched on a side stream after the timed region"));
  Outcome profiled = Accepted(1.85, 1.35);
  profiled.profile = {{"state", "memory-bound"},
                      {"dram_throughput_pct", 71.5},
                      {"achieved_occupancy_pct", 48.0},
                      {"top_stall", {{"reason", "long_scoreboard"}, {"pct", 38.2}}}};

  std::vector<CandidateSpec> specs = {
      {"c00seed0", 0, 0, {}, Source(0, loop), Accepted(1.10, 0.80)},
      {"c01seed1",
       1,
       1,
       {},
       Source(1, loop + "  oops\n"),
       Failed(false, "compilation failed (see compile.log)")},
      {"c02", 2, 0, {"c00seed0"}, Source(2, parallel), Accepted(1.40, 1.02)},
      {"c03", 3, 1, {"c01seed1"}, Source(3, loop + hostile), Failed(true, "")},
      {"c04", 4, 1, {"c03"}, Source(4, parallel + "  // blocked rows\n"), Accepted(1.25, 0.90)},
      {"c05", 5, 0, {"c02"}, Source(5, parallel + "  // vectorized exp\n"), profiled},
      {"c06", 6, 1, {"c04"}, Source(6, parallel + "  // side stream\n"), rejected},
      {"c07", 7, 0, {"c05"}, Source(7, parallel + "  // cached result\n"), suspect},
      {"c08", 8, 1, {"c04"}, Source(8, parallel + "  // two-pass max/sum\n"), Accepted(1.60, 1.15)},
      {"c09",
       9,
       0,
       {"c05", "c08"},
       Source(9, parallel + "  // fused max/sum, vectorized exp\n"),
       Accepted(2.05, 1.50)},
      {"c10", 10, 1, {"c08"}, Source(10, parallel + "  // prefetch\n"), Accepted(1.70, 1.20)},
      {"c11", 11, 0, {"c09"}, Source(11, parallel + "  // unroll 4\n"), std::nullopt},
  };
  FIXTURE_CHECK(AddCandidates(store, kRunId, "23_Softmax", day, specs));

  auto event = [&](const std::string& type, std::optional<int64_t> island,
                   std::optional<int64_t> iteration, json detail, int minute) {
    EventRecord e;
    e.run_id = kRunId;
    e.type = type;
    e.island = island;
    e.iteration = iteration;
    e.detail_json = detail.dump();
    e.created_at = Minute(day, minute);
    return store.RecordEvent(e);
  };
  FIXTURE_CHECK(event(
      "idea_added", 0, 2,
      {{"idea", "parallelize rows"}, {"note", "<img src=x onerror=alert(1)> must render as text"}},
      3));
  FIXTURE_CHECK(
      event("backtrack", 1, 6, {{"to_best_candidate_id", "c04"}, {"reason", "stagnation"}}, 8));
  FIXTURE_CHECK(event("crossover", 0, 9, {{"partner", 1}, {"adopted_as_best", true}}, 11));
  FIXTURE_CHECK(event("idea_pruned", 1, 10, {{"idea", "side streams"}}, 12));
  auto summary = AddCall(store, kRunId, "summarize", Minute(day, 13), 0.004, 900, 120);
  if (!summary) return summary.error();
  return store.SetRunStatus(kRunId, RunStatus::kCompleted);
}

struct BenchTask {
  std::string task;
  std::vector<Outcome> outcomes;
  bool bench_says_degenerate = false;
};

Status WriteBench(Store& store) {
  const std::string day = "2026-03-02";
  BenchRecord bench;
  bench.id = kBenchId;
  bench.created_at = Minute(day, 0);
  bench.suite = "suites/fixture";
  bench.strategy = "pacevolve";
  bench.llm_spec = "openai:synthetic-model";
  bench.device = "cpu";
  bench.iterations_target = 3;
  auto id = store.CreateBench(bench);
  if (!id) return id.error();

  Outcome suspect = Accepted(4.0, 3.0);
  suspect.verdict = "suspect";
  suspect.flags.push_back(Flag("timing_outlier", "warn", "speedup above the suspect threshold"));
  Outcome good_suspect = Accepted(3.0, 2.5);
  good_suspect.verdict = "suspect";
  good_suspect.flags = suspect.flags;
  Outcome zeros = Failed(true, "");
  zeros.correct = true;
  zeros.degenerate = true;
  std::vector<BenchTask> tasks = {
      // The suspect 3x is the best only with --include-suspect.
      {"1_Good",
       {Failed(false, "compile error"), Accepted(1.5, 0.9), Accepted(2.0, 1.2), good_suspect}},
      {"2_Slow", {Accepted(0.5, 0.4)}},
      {"3_Broken", {Failed(false, "compile error"), Failed(true, "")}},
      // The bench learned from its baselines that this task is degenerate; the
      // evaluation did not notice, so its 10x must be excluded by the report.
      {"4_Constant", {Accepted(10.0, 10.0)}, true},
      {"5_Suspect", {suspect}},
      // Here the evaluation itself says the task is degenerate.
      {"6_Zeros", {zeros}},
  };
  for (size_t t = 0; t < tasks.size(); ++t) {
    const BenchTask& task = tasks[t];
    std::string run_id = fmt::format("run-bench-{}", t + 1);
    auto created =
        store.CreateRun(Run(run_id, task.task, Minute(day, static_cast<int>(10 * t)), 1, 3));
    if (!created) return created.error();
    std::vector<CandidateSpec> specs;
    for (size_t i = 0; i < task.outcomes.size(); ++i) {
      specs.push_back({fmt::format("b{}c{}", t + 1, i), static_cast<int64_t>(i), 0,
                       i == 0 ? std::vector<std::string>{}
                              : std::vector<std::string>{fmt::format("b{}c{}", t + 1, i - 1)},
                       Source(static_cast<int>(i), fmt::format("  // task {} try {}\n", t + 1, i)),
                       task.outcomes[i]});
    }
    // One LLM call per candidate: 2450 tokens, $0.0125 x (iteration + 1).
    FIXTURE_CHECK(AddCandidates(store, run_id, task.task, day, specs));
    FIXTURE_CHECK(store.SetRunStatus(run_id, RunStatus::kCompleted));
    BenchRunRecord entry;
    entry.bench_id = kBenchId;
    entry.task = task.task;
    entry.task_path = "suites/fixture/" + task.task + ".py";
    entry.position = static_cast<int64_t>(t);
    entry.run_id = run_id;
    entry.degenerate = task.bench_says_degenerate;
    if (entry.degenerate) entry.degenerate_reason = "reference output is constant (baseline check)";
    FIXTURE_CHECK(store.AddBenchRun(entry));
  }
  return Status::Ok();
}

}  // namespace

Status WriteFixture(Store& store) {
  FIXTURE_CHECK(WriteRun(store));
  FIXTURE_CHECK(WriteBench(store));
  return store.Flush();
}

}  // namespace kforge::report::fixture
