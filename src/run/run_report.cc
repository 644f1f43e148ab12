#include "run/run_report.h"

#include <fmt/format.h>

#include "common/files.h"
#include "compile/native_compiler.h"
#include "llm/types.h"
#include "run/native_export.h"

namespace kforge::run {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

json OptionalNumber(const std::optional<double>& v) {
  return v ? json(*v) : json(nullptr);
}

json SpeedupJson(const EvaluationRecord& e) {
  return {{"eager", OptionalNumber(e.speedup_eager)},
          {"compile", OptionalNumber(e.speedup_compile)}};
}

Result<json> BestJson(Store& store, const std::string& run_id) {
  auto best = store.BestEvaluation(run_id, /*include_suspect=*/false);
  if (!best) return best.error();
  if (!*best) return json(nullptr);
  const EvaluatedCandidate& b = **best;
  return json{{"candidate_id", b.candidate.id},
              {"speedup", SpeedupJson(b.evaluation)},
              {"iteration", b.candidate.iteration},
              {"island", b.candidate.island},
              {"sha256", b.candidate.sha256}};
}

Result<json> LlmJson(Store& store, const std::string& run_id) {
  auto usage = store.LlmUsageOfRun(run_id);
  if (!usage) return usage.error();
  return json{{"calls", usage->calls},
              {"input_tokens", usage->input_tokens},
              {"output_tokens", usage->output_tokens},
              {"cost_usd", usage->cost_usd}};
}

std::string SpeedupText(const std::optional<double>& s) {
  return s ? fmt::format("{:.2f}x", *s) : "-";
}

}  // namespace

Result<json> RunResultJson(Store& store, const std::string& run_id, const LoopOutcome* outcome) {
  auto run = store.GetRun(run_id);
  if (!run) return run.error();
  auto evaluations = store.CountEvaluations(run_id);
  if (!evaluations) return evaluations.error();
  auto best = BestJson(store, run_id);
  if (!best) return best.error();
  auto llm = LlmJson(store, run_id);
  if (!llm) return llm.error();
  json out = {{"run_id", run_id},
              {"status", std::string(RunStatusName(outcome ? outcome->status : run->status))},
              {"evaluations", *evaluations},
              {"best", *best},
              {"llm", *llm},
              {"target", run->iterations_target},
              {"task", run->task_name},
              {"strategy", run->strategy}};
  if (outcome != nullptr && !outcome->reason.empty()) out["reason"] = outcome->reason;
  return out;
}

Result<json> ShowJson(Store& store, const std::string& run_id) {
  auto run = store.GetRun(run_id);
  if (!run) return run.error();
  auto evaluated = store.EvaluationsOfRun(run_id);
  if (!evaluated) return evaluated.error();
  auto events = store.EventsOfRun(run_id);
  if (!events) return events.error();
  auto best = BestJson(store, run_id);
  if (!best) return best.error();
  auto llm = LlmJson(store, run_id);
  if (!llm) return llm.error();

  json evals = json::array();
  for (const EvaluatedCandidate& e : *evaluated) {
    evals.push_back({{"candidate_id", e.candidate.id},
                     {"iteration", e.candidate.iteration},
                     {"island", e.candidate.island},
                     {"accepted", e.evaluation.accepted},
                     {"speedup", SpeedupJson(e.evaluation)},
                     {"verdict", e.evaluation.verdict},
                     {"sha256", e.candidate.sha256},
                     {"parent_ids", e.candidate.parent_ids}});
  }
  json event_list = json::array();
  for (const EventRecord& e : *events) {
    json detail = json::parse(e.detail_json, nullptr, false);
    if (detail.is_discarded()) detail = e.detail_json;
    event_list.push_back({{"type", e.type},
                          {"island", e.island ? json(*e.island) : json(nullptr)},
                          {"iteration", e.iteration ? json(*e.iteration) : json(nullptr)},
                          {"detail", detail},
                          {"seq", e.seq},
                          {"created_at", e.created_at}});
  }
  return json{{"run_id", run_id},
              {"status", std::string(RunStatusName(run->status))},
              {"task", run->task_name},
              {"strategy", run->strategy},
              {"evaluations", evals},
              {"events", event_list},
              {"best", *best},
              {"target", run->iterations_target},
              {"llm", *llm},
              {"llm_spec", run->llm_spec},
              {"device", run->device},
              {"islands", run->islands},
              {"seed", run->seed},
              {"task_path", run->task_path},
              {"created_at", run->created_at},
              {"updated_at", run->updated_at}};
}

Result<std::string> ShowText(Store& store, const std::string& run_id) {
  auto j = ShowJson(store, run_id);
  if (!j) return j.error();
  const json& s = *j;
  std::string out = fmt::format(
      "run {}  {}\n  task {} ({})\n  strategy {}, model {}, device {}\n  evaluations {}/{}, LLM "
      "{} calls, {} tokens, ${:.4f}\n  created {}, updated {}\n",
      s["run_id"].get<std::string>(), s["status"].get<std::string>(), s["task"].get<std::string>(),
      s["task_path"].get<std::string>(), s["strategy"].get<std::string>(),
      s["llm_spec"].get<std::string>(), s["device"].get<std::string>(), s["evaluations"].size(),
      s["target"].get<int64_t>(), s["llm"]["calls"].get<int64_t>(),
      s["llm"]["input_tokens"].get<int64_t>() + s["llm"]["output_tokens"].get<int64_t>(),
      s["llm"]["cost_usd"].get<double>(), s["created_at"].get<std::string>(),
      s["updated_at"].get<std::string>());
  out += fmt::format("\n  {:>4}  {:<16}  {:>6}  {:<8}  {:<8}  {:>8}  {:>8}\n", "iter", "candidate",
                     "island", "accepted", "verdict", "eager", "compile");
  for (const json& e : s["evaluations"]) {
    auto number = [](const json& v) -> std::optional<double> {
      return v.is_number() ? std::optional<double>(v.get<double>()) : std::nullopt;
    };
    out += fmt::format("  {:>4}  {:<16}  {:>6}  {:<8}  {:<8}  {:>8}  {:>8}\n",
                       e["iteration"].get<int64_t>(), e["candidate_id"].get<std::string>(),
                       e["island"].get<int64_t>(), e["accepted"].get<bool>() ? "yes" : "no",
                       e["verdict"].get<std::string>(), SpeedupText(number(e["speedup"]["eager"])),
                       SpeedupText(number(e["speedup"]["compile"])));
  }
  const json& best = s["best"];
  if (best.is_null()) {
    out += "\n  best: none accepted\n";
  } else {
    auto eager = best["speedup"]["eager"];
    auto compile = best["speedup"]["compile"];
    out += fmt::format(
        "\n  best: candidate {} (iteration {}), {} vs eager, {} vs torch.compile\n",
        best["candidate_id"].get<std::string>(), best["iteration"].get<int64_t>(),
        SpeedupText(eager.is_number() ? std::optional<double>(eager.get<double>()) : std::nullopt),
        SpeedupText(compile.is_number() ? std::optional<double>(compile.get<double>())
                                        : std::nullopt));
  }
  for (const json& e : s["events"]) {
    std::string type = e["type"].get<std::string>();
    if (type == "stopped" || type == "failed") {
      out += fmt::format("  {} at {}: {}\n", type, e["created_at"].get<std::string>(),
                         e["detail"].is_object() ? e["detail"].value("reason", "") : "");
    }
  }
  return out;
}

Result<json> RunsJson(Store& store) {
  auto runs = store.ListRuns();
  if (!runs) return runs.error();
  json out = json::array();
  for (const RunSummary& r : *runs) {
    out.push_back({{"run_id", r.run.id},
                   {"status", std::string(RunStatusName(r.run.status))},
                   {"task", r.run.task_name},
                   {"strategy", r.run.strategy},
                   {"created_at", r.run.created_at},
                   {"evaluations", r.evaluations},
                   {"target", r.run.iterations_target},
                   {"llm_spec", r.run.llm_spec},
                   {"device", r.run.device}});
  }
  return out;
}

Result<std::string> RunsText(Store& store) {
  auto runs = store.ListRuns();
  if (!runs) return runs.error();
  if (runs->empty()) return std::string("no runs in " + store.location() + "\n");
  std::string out = fmt::format("{:<24}  {:<9}  {:<28}  {:<10}  {:>11}  {}\n", "run", "status",
                                "task", "strategy", "evaluations", "created");
  for (const RunSummary& r : *runs) {
    out +=
        fmt::format("{:<24}  {:<9}  {:<28}  {:<10}  {:>11}  {}\n", r.run.id,
                    RunStatusName(r.run.status), r.run.task_name, r.run.strategy,
                    fmt::format("{}/{}", r.evaluations, r.run.iterations_target), r.run.created_at);
  }
  return out;
}

namespace {

// The task's source for a native export: as the run recorded it, else the
// task file.
Result<std::string> TaskSourceOfRun(Store& store, const RunRecord& run) {
  if (!run.task_hash.empty()) {
    auto stored = store.GetTask(run.task_hash);
    if (!stored) return stored.error();
    if (*stored) return (*stored)->source;
  }
  auto file = ReadFile(run.task_path);
  if (!file) {
    return Error::NotFound(fmt::format(
        "run {}: model_new.py for a native candidate embeds the task, but its source is not in "
        "the database and {} cannot be read",
        run.id, run.task_path.empty() ? std::string("the task file") : run.task_path));
  }
  return file;
}

}  // namespace

Result<ExportedBest> ExportBest(Store& store, const std::string& run_id, const fs::path& dir) {
  auto run = store.GetRun(run_id);
  if (!run) return run.error();
  auto best = store.BestEvaluation(run_id, /*include_suspect=*/false);
  if (!best) return best.error();
  if (!*best) {
    return Error::NotFound(fmt::format("run {} has no accepted candidate yet", run_id));
  }
  const EvaluatedCandidate& b = **best;
  const bool native = b.candidate.format == "native";
  std::string task_source;
  if (native) {
    auto source = TaskSourceOfRun(store, *run);
    if (!source) return source.error();
    task_source = std::move(source).value();
  }
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return Error::BadInput(fmt::format("cannot create {}: {}", dir.string(), ec.message()));
  ExportedBest out;
  out.candidate_id = b.candidate.id;
  out.speedup_eager = b.evaluation.speedup_eager.value_or(0);
  out.source_path =
      dir / fmt::format("{}_{}.{}", run->task_name, b.candidate.id, native ? "cu" : "py");
  out.model_new_path = dir / "model_new.py";
  if (Status st = WriteFileAtomic(out.source_path, b.candidate.source); !st) return st.error();

  std::string compile =
      b.evaluation.speedup_compile ? fmt::format("{:.2f}x", *b.evaluation.speedup_compile) : "n/a";
  std::string header = fmt::format(
      "# model_new.py: generated by kforge, run {} (strategy {}, model {}), candidate {} "
      "(iteration {}).\n"
      "# Measured on {}: {:.2f}x faster than eager PyTorch, {} vs torch.compile, verdict {}.\n"
      "# A drop-in replacement for `Model` of {}:\n"
      "#     from model_new import ModelNew\n"
      "#     model = ModelNew(*init_args)  # the arguments Model takes\n"
      "# Format: {}. Full evaluation: kforge show {} --json.\n",
      run_id, run->strategy, run->llm_spec, b.candidate.id, b.candidate.iteration, run->device,
      out.speedup_eager, compile, b.evaluation.verdict, run->task_path, b.candidate.format, run_id);
  std::string model_new;
  if (native) {
    header += fmt::format(
        "# Generated from a native candidate ({}, kforge C ABI v{}): ModelNew holds the task's\n"
        "# reference Model (its weights) and calls the candidate's kforge_forward through an\n"
        "# extension that torch.utils.cpp_extension.load_inline builds on the first forward\n"
        "# (nvcc and a CUDA GPU needed).\n\n",
        out.source_path.filename().string(), compile::kNativeAbiVersion);
    NativeExportInput in;
    in.candidate_source = b.candidate.source;
    in.abi_header = std::string(compile::NativeAbiHeader());
    in.task_source = std::move(task_source);
    in.task_name = run->task_name;
    in.source_name = out.source_path.filename().string();
    in.header_comment = std::move(header);
    model_new = NativeModelNewPy(in);
  } else {
    model_new = header + "\n" + b.candidate.source;
  }
  if (Status st = WriteFileAtomic(out.model_new_path, model_new); !st) return st.error();
  return out;
}

int RunExitCode(const LoopOutcome& outcome) {
  if (outcome.status != RunStatus::kFailed) return 0;
  if (outcome.error && (outcome.error->kind == ErrorKind::kBadInput ||
                        outcome.error->kind == ErrorKind::kNotFound)) {
    return 2;
  }
  return 1;
}

}  // namespace kforge::run
