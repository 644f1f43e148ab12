#include "run/run_launcher.h"

#include <fmt/format.h>

#include <cstdlib>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>

#include "common/files.h"
#include "common/line_printer.h"
#include "eval/evaluator.h"
#include "llm/llm_session.h"
#include "llm/model_spec.h"
#include "run/device_probe.h"
#include "run/evaluation_backend.h"
#include "run/model_client.h"
#include "run/run_knowledge.h"
#include "run/store_call_log.h"
#include "run/strategy_factory.h"
#include "search/baseline/prompt_templates.h"
#include "task/task.h"

namespace kforge::run {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

constexpr int64_t kMaxIterations = 1000000;
constexpr int kMaxIslands = 64;

// Everything a run needs that is not in the loop itself.
struct PreparedRun {
  RunRecord run;
  Config config;
  Task task;
  std::string policy = "strict";
  std::vector<int> gpus;
  std::string hardware;
  std::string format;
  fs::path scratch;
};

bool IsReplaySpec(const std::string& spec) {
  auto specs = llm::ParseModelSpecs(spec);
  if (!specs) return false;
  for (const llm::ModelSpec& s : *specs) {
    if (s.provider == llm::Provider::kReplay) return true;
  }
  return false;
}

json ConfigToJson(const Config& config) {
  json out = json::object();
  for (const auto& [key, value] : config.EffectiveListing()) {
    const ConfigKey* decl = ConfigSchema::Global().Find(key);
    if (decl != nullptr && decl->secret) continue;  // keys never enter the database
    out[key] = value;
  }
  return out;
}

Result<fs::path> MakeScratch(const std::string& run_id) {
  std::error_code ec;
  fs::path parent = fs::temp_directory_path(ec);
  if (ec) parent = "/tmp";
  return MakeTempDir(parent, "kforge-run-" + run_id + "-");
}

void RemoveScratch(const fs::path& dir) {
  if (const char* keep = std::getenv("KFORGE_KEEP_SCRATCH"); keep != nullptr && *keep == '1') {
    return;
  }
  std::error_code ec;
  fs::remove_all(dir, ec);
}

// The loop and what it uses, owned together so an abandoned run can keep
// all of it alive (leaked on purpose: the process is about to exit).
struct RunParts {
  std::unique_ptr<StoreCallLog> log;
  std::unique_ptr<ReplayRemainder> replay_rest;
  std::unique_ptr<llm::LlmSession> session;
  std::unique_ptr<SessionModelClient> model;
  std::unique_ptr<search::Strategy> strategy;
  std::unique_ptr<RunKnowledge> knowledge;  // null: kb.enabled is false
  std::unique_ptr<EvaluatorBackend> backend;
  std::unique_ptr<OptimizeLoop> loop;

  void Leak() {
    (void)log.release();
    (void)replay_rest.release();
    (void)session.release();
    (void)model.release();
    (void)strategy.release();
    (void)knowledge.release();
    (void)backend.release();
    (void)loop.release();
  }
};

// Opens the LLM session and builds the strategy: both validate user input
// (spec, key, templates), so a new run does this before it is created.
Status PrepareParts(Store& store, const PreparedRun& p, bool resumed, RunParts& parts) {
  auto settings = llm::LlmSettings::FromConfig(p.config);
  if (!settings) return settings.error();
  // An optimize run's prompts carry measured times, which differ on every
  // evaluation: its replay serves the recorded answers by stage, in order.
  if (IsReplaySpec(p.run.llm_spec)) settings->replay_in_order = true;
  parts.log = std::make_unique<StoreCallLog>(store);
  llm::LlmCallLog* replay_source = parts.log.get();
  if (resumed) {
    parts.replay_rest = std::make_unique<ReplayRemainder>(*parts.log, p.run.id);
    replay_source = parts.replay_rest.get();
  }
  auto session =
      llm::LlmSession::Open(std::move(settings).value(),
                            {p.run.id, p.run.llm_spec, parts.log.get(), replay_source, nullptr});
  if (!session) return session.error().ToError();
  parts.session = std::move(session).value();
  parts.model = std::make_unique<SessionModelClient>(*parts.session);

  auto templates = search::PromptTemplates::Load(search::PromptsDir());
  if (!templates) return templates.error();
  search::StrategyContext context;
  context.task_name = p.task.name;
  context.task_source = p.task.source;
  context.device = p.run.device;
  context.hardware = p.hardware;
  context.format = p.format;
  context.policy = p.policy;
  context.seed = static_cast<uint64_t>(p.run.seed);
  context.islands = static_cast<int>(p.run.islands);
  auto strategy = MakeStrategy(p.run.strategy, context, *templates, p.config);
  if (!strategy) return strategy.error();
  parts.strategy = std::move(strategy).value();

  auto kb_options = KbRunOptionsFromConfig(p.config);
  if (!kb_options) return kb_options.error();
  if (kb_options->enabled) {
    KnowledgeSetup setup;
    setup.run_id = p.run.id;
    setup.seed = static_cast<uint64_t>(p.run.seed);
    setup.device = p.run.device;
    setup.hardware = p.hardware;
    setup.task_path = p.task.path;
    setup.gpu = p.gpus.empty() ? 0 : p.gpus.front();
    setup.native_candidates = p.format == "native";
    setup.options = *kb_options;
    auto knowledge = RunKnowledge::Open(store, std::move(setup), *templates);
    if (!knowledge) return knowledge.error();
    parts.knowledge = std::move(knowledge).value();
  }
  return Status::Ok();
}

Result<RunEnd> Execute(Store& store, PreparedRun& p, bool resumed, RunParts& parts,
                       const StopRequest& stop, ProgressReporter& progress) {
  auto loop_options = LoopOptionsFromConfig(p.config);
  if (!loop_options) return loop_options.error();
  loop_options->iterations = p.run.iterations_target;

  EvalOptions eval = EvalOptionsFromConfig(p.config);
  eval.device = p.run.device;
  eval.policy = p.policy == "any" ? Policy::kAny : Policy::kStrict;
  eval.gpu = p.gpus.empty() ? 0 : p.gpus.front();
  parts.backend = std::make_unique<EvaluatorBackend>(p.task, eval, p.gpus, p.scratch);
  if (parts.knowledge) {
    parts.knowledge->SetScratch(p.scratch);
    if (p.format == "native") {
      EvaluatorBackend* backend = parts.backend.get();
      parts.knowledge->SetNativeBuild(
          [backend](const std::string& source) { return backend->BuildNativeLibrary(source); });
    }
  }
  LoopContext context{p.run.id, p.format, resumed, parts.knowledge.get(), p.scratch / "agent"};
  if (parts.knowledge && parts.knowledge->profiling()) {
    // The agent's profile tool reports the draft's kernels as the knowledge base reads them.
    const RunKnowledge* knowledge = parts.knowledge.get();
    context.draft_profiler = [knowledge](const ProfileJob& job) {
      return knowledge->RunProfile(job);
    };
  }
  parts.loop =
      std::make_unique<OptimizeLoop>(store, std::move(context), *parts.strategy, *parts.model,
                                     *parts.backend, *loop_options, stop, progress);
  LinePrinter::Get().Line(fmt::format(
      "kforge: run {} {}: task {}, strategy {}, {} iterations, model {}, evaluating on {}",
      p.run.id, resumed ? "resumed" : "started", p.task.name, p.run.strategy,
      p.run.iterations_target, p.run.llm_spec, parts.backend->Describe()));
  auto outcome = parts.loop->Run();
  if (!outcome) return outcome.error();
  RunEnd end{p.run.id, std::move(outcome).value()};
  if (end.outcome.abandoned) {
    parts.Leak();
  } else {
    parts.loop.reset();
    RemoveScratch(p.scratch);
  }
  return end;
}

Status CheckRequest(const OptimizeRequest& r) {
  if (r.iterations < 1 || r.iterations > kMaxIterations) {
    return Error::BadInput(fmt::format("--iterations must be between 1 and {}", kMaxIterations));
  }
  if (r.islands < 0 || r.islands > kMaxIslands) {
    return Error::BadInput(
        fmt::format("--islands must be between 1 and {} (0: the strategy's default)", kMaxIslands));
  }
  if (r.policy != "strict" && r.policy != "any") {
    return Error::BadInput(fmt::format("--policy must be strict or any, not '{}'", r.policy));
  }
  if (r.gpu < -1) return Error::BadInput("--gpu must be a GPU index");
  return CheckStrategyAvailable(r.strategy);
}

// Another program holding the database's write lock past the busy timeout
// is the user's to resolve, like a damaged file: one line, exit 2.
Error LockedIsBadInput(Error e) {
  if (e.kind == ErrorKind::kTimeout) e.kind = ErrorKind::kBadInput;
  return e;
}

std::vector<int> PickGpus(const DeviceInfo& device, int gpu, int64_t workers) {
  if (device.kind != "cuda") return {0};
  if (gpu >= 0) return {gpu};
  int n = device.visible_gpus;
  if (workers > 0 && workers < n) n = static_cast<int>(workers);
  std::vector<int> gpus;
  for (int i = 0; i < std::max(1, n); ++i) gpus.push_back(i);
  return gpus;
}

}  // namespace

Result<DeviceInfo> CheckOptimizeRequest(const OptimizeRequest& request) {
  if (Status st = CheckRequest(request); !st) return st.error();
  std::string spec =
      request.llm_spec.empty() ? request.config.GetString("llm.spec") : request.llm_spec;
  if (spec.empty()) {
    return Error::BadInput("no model given: pass --llm SPEC or set the config key llm.spec");
  }
  if (auto settings = llm::LlmSettings::FromConfig(request.config); !settings) {
    return settings.error();
  }
  if (auto loop_options = LoopOptionsFromConfig(request.config); !loop_options) {
    return loop_options.error();
  }
  if (auto templates = search::PromptTemplates::Load(search::PromptsDir()); !templates) {
    return templates.error();
  }
  return ProbeDevice(request.device, request.gpu);
}

Result<RunEnd> StartOptimize(Store& store, OptimizeRequest request, const StopRequest& stop,
                             ProgressReporter& progress) {
  auto device = CheckOptimizeRequest(request);
  if (!device) return device.error();
  auto task = LoadTaskFile(request.task_path);
  if (!task) return task.error();
  std::string spec =
      request.llm_spec.empty() ? request.config.GetString("llm.spec") : request.llm_spec;

  PreparedRun p;
  p.task = std::move(task).value();
  p.policy = request.policy;
  p.gpus = PickGpus(*device, request.gpu, WorkersFromConfig(request.config));
  p.hardware = device->hardware;
  auto format = CandidateFormatFromConfig(request.config, device->kind);
  if (!format) return format.error();
  p.format = std::move(format).value();
  p.run.id = NewRunId();
  p.run.status = RunStatus::kCreated;
  p.run.task_name = p.task.name;
  p.run.task_path = p.task.path.string();
  p.run.task_hash = p.task.sha256;
  p.run.strategy = request.strategy;
  p.run.llm_spec = spec;
  p.run.device = device->kind;
  p.run.iterations_target = request.iterations;
  p.run.seed = static_cast<int64_t>(request.seed);
  // 0: the strategy's default (pacevolve.islands; one island otherwise).
  p.run.islands = request.islands > 0               ? request.islands
                  : request.strategy == "pacevolve" ? request.config.GetInt("pacevolve.islands")
                                                    : 1;
  p.run.config_json = llm::DumpJson({{"config", ConfigToJson(request.config)},
                                     {"policy", p.policy},
                                     {"gpus", p.gpus},
                                     {"hardware", p.hardware},
                                     {"format", p.format}});
  p.config = std::move(request.config);

  RunParts parts;
  if (Status st = PrepareParts(store, p, /*resumed=*/false, parts); !st) return st.error();
  auto scratch = MakeScratch(p.run.id);
  if (!scratch) return scratch.error();
  p.scratch = *scratch;

  if (Status st =
          store.PutTask({p.task.sha256, p.task.name, p.task.path.string(), p.task.source, ""});
      !st) {
    RemoveScratch(p.scratch);
    return LockedIsBadInput(st.error());
  }
  auto created = store.CreateRun(p.run);
  if (!created) {
    RemoveScratch(p.scratch);
    return LockedIsBadInput(created.error());
  }
  if (request.on_created) request.on_created(p.run.id);
  auto end = Execute(store, p, /*resumed=*/false, parts, stop, progress);
  if (!end) {
    RemoveScratch(p.scratch);
    return LockedIsBadInput(end.error());
  }
  return end;
}

Result<RunEnd> ResumeRun(Store& store, const ResumeRequest& request, const StopRequest& stop,
                         ProgressReporter& progress) {
  auto run = store.GetRun(request.run_id);
  if (!run) return run.error();
  PreparedRun p;
  p.run = std::move(run).value();
  if (p.run.status == RunStatus::kCompleted) {
    auto evaluations = store.CountEvaluations(p.run.id);
    if (!evaluations) return evaluations.error();
    LinePrinter::Get().Line(fmt::format("kforge: run {} is already completed", p.run.id));
    RunEnd end{p.run.id, {}};
    end.outcome.status = RunStatus::kCompleted;
    end.outcome.evaluations = *evaluations;
    return end;
  }
  if (Status st = CheckStrategyAvailable(p.run.strategy); !st) return st.error();

  json recorded = json::parse(p.run.config_json, nullptr, false);
  if (!recorded.is_object()) {
    return Error::BadInput(fmt::format("run {}: its recorded config is not JSON", p.run.id));
  }
  const json recorded_config = recorded.value("config", json::object());
  for (const auto& [key, value] : recorded_config.items()) {
    if (!value.is_string()) continue;
    if (Status st = p.config.Set(key, value.get<std::string>()); !st) {
      LinePrinter::Get().Warn(fmt::format("run {}: recorded config key '{}' ignored: {}", p.run.id,
                                          key, st.error().message));
    }
  }
  for (const std::string& o : request.overrides) {
    if (Status st = p.config.SetOverride(o); !st) return st.error();
  }
  p.policy = recorded.value("policy", "strict");
  p.gpus = recorded.value("gpus", std::vector<int>{0});
  p.hardware = recorded.value("hardware", p.run.device == "cpu" ? CpuDescription() : "a GPU");
  p.format = recorded.value("format", p.run.device == "cpu" ? "cpp" : "kernelbench");

  auto scratch = MakeScratch(p.run.id);
  if (!scratch) return scratch.error();
  p.scratch = *scratch;
  auto task = LoadTaskFile(p.run.task_path);
  if (!task || task->sha256 != p.run.task_hash) {
    auto stored = store.GetTask(p.run.task_hash);
    if (!stored) return stored.error();
    if (!*stored) {
      return Error::NotFound(fmt::format(
          "run {}: task file {} is missing or changed, and its recorded source is not in {}",
          p.run.id, p.run.task_path, store.location()));
    }
    fs::path copy = p.scratch / "task" / (p.run.task_name + ".py");
    std::error_code ec;
    fs::create_directories(copy.parent_path(), ec);
    if (Status st = WriteFileAtomic(copy, (*stored)->source); !st) return st.error();
    LinePrinter::Get().Warn(fmt::format(
        "task file {} is missing or changed since the run started: using its recorded source",
        p.run.task_path));
    task = LoadTaskFile(copy);
    if (!task) return task.error();
  }
  p.task = std::move(task).value();

  RunParts parts;
  if (Status st = PrepareParts(store, p, /*resumed=*/true, parts); !st) {
    RemoveScratch(p.scratch);
    return st.error();
  }
  auto end = Execute(store, p, /*resumed=*/true, parts, stop, progress);
  if (!end) {
    RemoveScratch(p.scratch);
    return LockedIsBadInput(end.error());
  }
  return end;
}

}  // namespace kforge::run
