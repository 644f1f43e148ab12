// kforge baseline: eager, torch.compile and speed-of-light baselines for a
// whole suite on this device, stored in the database (and the evaluator's
// baseline cache) keyed by (task hash, device name, PyTorch version). A task
// already measured on this device is not measured again unless --force, so a
// suite can be spread over several sessions. One task at a time: the timing
// window needs the GPU to itself.
#include <fmt/format.h>

#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <thread>

#include "cli/command.h"
#include "cli/config_setup.h"
#include "cli/suite_entries.h"
#include "common/line_printer.h"
#include "eval/compile_ahead.h"
#include "eval/device_identity.h"
#include "eval/evaluator.h"
#include "run/run_store.h"
#include "store/records.h"

namespace kforge::cli {

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

struct BaselineArgs {
  std::string suite, device = "auto", db;
  int gpu = 0;
  uint64_t seed = 42;
  double compile_cap_s = 0;  // 0: eval.sandbox.compile_timeout_s
  int compile_jobs = -1;     // -1: half the host's hardware threads
  bool force = false;
  bool stored_only = false;  // report what is stored, measure nothing
  bool json = false;
  ConfigFlags config;
};

// What became of one task.
struct TaskBaseline {
  std::string name, path, sha256;
  std::string status;  // measured | stored | missing (--stored-only) | skipped | error
  std::string reason;  // why skipped or failed
  json record;         // the stored baseline (measured or stored)
  double seconds = 0;

  json ToJson() const {
    auto median = [&](const char* key) -> json {
      if (!record.is_object() || !record.contains(key) || !record[key].is_object()) return nullptr;
      return record[key].value("median", json(nullptr));
    };
    return {{"task", name},
            {"path", path},
            {"sha256", sha256},
            {"status", status},
            {"reason", reason.empty() ? json(nullptr) : json(reason)},
            {"eager_ms", median("eager_ms")},
            {"compile_ms", median("compile_ms")},
            {"sol_floor_ms",
             record.is_object() ? record.value("sol_floor_ms", json(nullptr)) : json(nullptr)},
            {"degenerate",
             record.is_object() ? record.value("degenerate", json(nullptr)) : json(nullptr)},
            {"seconds", seconds}};
  }
};

// A reference that cannot run here is skipped, not an error of the suite:
// its inputs do not fit, or its build ran past the per-task cap.
std::optional<std::string> SkipReason(const std::string& message) {
  auto has = [&](const char* needle) { return message.find(needle) != std::string::npos; };
  if (has("out of memory") || has("OutOfMemoryError") || has("memory limit") ||
      has("can't allocate memory") || has("MemoryError")) {
    return "does not fit in memory: " + message;
  }
  if (has("did not answer within its time limit")) {
    return "exceeded the per-task time cap: " + message;
  }
  return std::nullopt;
}

// Below this many hardware threads --compile-jobs defaults to 0.
constexpr int kMinThreadsForCompileAhead = 8;

std::string Ms(const json& v) {
  return v.is_number() ? fmt::format("{:.4f}", v.get<double>()) : "-";
}

int RunBaseline(const BaselineArgs& a) {
  Config config = LoadConfig(a.config);
  EvalOptions opt = EvalOptionsFromConfig(config);
  auto identity = ProbeHarnessDevice(a.device, a.gpu);
  if (!identity) throw OperationError{identity.error()};
  opt.device = identity->kind;
  opt.gpu = a.gpu;
  opt.seed = a.seed;
  opt.use_baseline_cache = false;  // measured here, never read back
  if (a.compile_cap_s < 0) throw OperationError{Error::BadInput("--compile-cap must be >= 0")};
  if (a.compile_cap_s > 0) opt.compile_timeout_s = a.compile_cap_s;
  // Ahead-of-time builds pay only with cores to spare: on a small host they
  // compete with each other and add a process start per task (a 2-core
  // machine measured 35 s sequential vs 44 s ahead for two tasks).
  const int threads = static_cast<int>(std::thread::hardware_concurrency());
  const int compile_jobs = a.compile_jobs >= 0
                               ? a.compile_jobs
                               : (threads >= kMinThreadsForCompileAhead ? threads / 2 : 0);

  std::vector<SuiteEntry> entries = ReadSuite(a.suite);
  auto store = run::OpenRunStore(a.db, /*create=*/true, config);
  if (!store) throw OperationError{store.error()};
  Evaluator evaluator(opt);
  auto& printer = LinePrinter::Get();
  auto print = [&](const TaskBaseline& t) {
    json j = t.ToJson();
    printer.Line(fmt::format("{:<52} {:<8} eager {:>9} ms  compile {:>9} ms  floor {:>9} ms  {}",
                             t.name, t.status, Ms(j["eager_ms"]), Ms(j["compile_ms"]),
                             Ms(j["sol_floor_ms"]), t.reason));
  };
  // First what the database already has (and what cannot be read at all),
  // then the rest measured in chunks: each chunk's torch.compile builds run
  // together on the host's cores, then its tasks are timed one by one. A
  // chunk of twice the jobs keeps the work lost to an interruption small.
  const int n = static_cast<int>(entries.size());
  std::vector<TaskBaseline> results(entries.size());
  std::vector<int> to_measure;
  for (int i = 0; i < n; ++i) {
    const SuiteEntry& e = entries[i];
    TaskBaseline& t = results[i];
    t.path = e.path.string();
    t.name = e.task ? e.task->name : e.path.stem().string();
    if (!e.task) {
      t.status = "error";
      t.reason = e.error;
      print(t);
      continue;
    }
    t.sha256 = e.task->sha256;
    auto stored = (*store)->GetBaseline(t.sha256, identity->name, identity->torch_version);
    if (!stored) throw OperationError{stored.error()};
    if (*stored && !a.force) {
      t.status = "stored";
      t.record = json::parse((*stored)->baseline_json, nullptr, false);
    } else if (a.stored_only) {
      t.status = "missing";
    } else {
      to_measure.push_back(i);
      continue;
    }
    print(t);
  }
  const bool compile_ahead = compile_jobs > 0 && opt.time_compile;
  const size_t chunk = compile_ahead ? 2 * static_cast<size_t>(compile_jobs) : 1;
  for (size_t c = 0; c < to_measure.size(); c += chunk) {
    std::vector<int> part(to_measure.begin() + c,
                          to_measure.begin() + std::min(c + chunk, to_measure.size()));
    std::vector<PrecompileOutcome> built(part.size());
    if (compile_ahead) {
      printer.Status(fmt::format("compiling {} task(s) ahead, {} at a time", part.size(),
                                 std::min<size_t>(part.size(), compile_jobs)));
      std::vector<const Task*> tasks;
      for (int i : part) tasks.push_back(&*entries[i].task);
      built = CompileAhead(tasks, opt, compile_jobs, opt.compile_timeout_s);
    }
    for (size_t k = 0; k < part.size(); ++k) {
      const int i = part[k];
      TaskBaseline& t = results[i];
      printer.Status(fmt::format("[{}/{}] {}", i + 1, n, t.name));
      auto start = std::chrono::steady_clock::now();
      try {
        Evaluator::Baseline b = evaluator.MeasureBaseline(*entries[i].task);
        t.record = std::move(b.record);
        t.record["task"] = t.name;
        t.record["sol_floor_ms"] =
            b.result.sol_floor_ms ? json(*b.result.sol_floor_ms) : json(nullptr);
        t.record["device"] = {{"name", identity->name}, {"torch_version", identity->torch_version}};
        // Where the task's time went (reference start and load, trials,
        // timing window with its torch.compile build): what a faster suite
        // run would have to cut.
        if (b.result.extra.contains("phase_seconds")) {
          t.record["phase_seconds"] = b.result.extra["phase_seconds"];
        }
        if (compile_ahead) {
          t.record["compiled_ahead"] = {
              {"ok", built[k].ok},
              {"seconds", built[k].seconds},
              {"error", built[k].error.empty() ? json(nullptr) : json(built[k].error)}};
        }
        t.status = "measured";
        BaselineRecord rec{t.sha256, identity->name, identity->torch_version, t.record.dump(), ""};
        ThrowIfError((*store)->PutBaseline(rec));
      } catch (const OperationError& err) {
        // The task's fault (bad file, reference crash, no room): this task's
        // result; the suite goes on.
        auto skip = SkipReason(err.error.message);
        t.status = skip ? "skipped" : "error";
        t.reason = skip ? *skip : err.error.message;
      }
      t.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      print(t);
    }
  }

  int measured = 0, stored = 0, missing = 0, skipped = 0, errors = 0;
  json tasks = json::array(), skipped_list = json::array();
  for (const auto& t : results) {
    measured += t.status == "measured";
    stored += t.status == "stored";
    missing += t.status == "missing";
    errors += t.status == "error";
    if (t.status == "skipped") {
      ++skipped;
      skipped_list.push_back({{"task", t.name}, {"reason", t.reason}});
    }
    tasks.push_back(t.ToJson());
  }
  json summary = {{"tasks", n},
                  {"measured", measured},
                  {"stored", stored},
                  {"missing", missing},
                  {"skipped", skipped},
                  {"errors", errors},
                  {"skipped_tasks", skipped_list}};
  if (a.json) {
    json out = {{"kforge_version", KFORGE_VERSION},
                {"suite", a.suite},
                {"device",
                 {{"kind", identity->kind},
                  {"name", identity->name},
                  {"index", identity->index},
                  {"torch_version", identity->torch_version}}},
                {"tasks", tasks},
                {"summary", summary}};
    std::cout << out.dump(2) << std::endl;
  } else {
    std::cout << fmt::format(
        "{} tasks on {} (torch {}): {} measured, {} already stored, {} not measured, {} skipped, "
        "{} errors\n",
        n, identity->name, identity->torch_version, measured, stored, missing, skipped, errors);
    for (const auto& s : skipped_list) {
      std::cout << fmt::format("  skipped {}: {}\n", s["task"].get<std::string>(),
                               s["reason"].get<std::string>());
    }
  }
  return 0;
}

}  // namespace

void AddBaselineCommand(CLI::App& root, CommandTable& table) {
  auto args = std::make_shared<BaselineArgs>();
  CLI::App* cmd = root.add_subcommand(
      "baseline", "Measure eager, torch.compile and speed-of-light baselines for a suite");
  cmd->add_option("--suite", args->suite,
                  "Directory of task files (searched recursively), a text file listing them, "
                  "or one task file")
      ->required();
  cmd->add_option("--device", args->device, "auto|cuda|cpu")
      ->envname("KFORGE_DEVICE")
      ->default_val("auto");
  cmd->add_option("--gpu", args->gpu, "GPU index")->envname("KFORGE_GPU")->default_val(0);
  cmd->add_option("--seed", args->seed, "base seed")->default_val(42);
  cmd->add_option("--compile-cap", args->compile_cap_s,
                  "per-task limit (s) on loading and compiling a reference; a task past it is "
                  "skipped (0: eval.sandbox.compile_timeout_s)")
      ->default_val(0);
  cmd->add_option("--compile-jobs", args->compile_jobs,
                  "torch.compile builds run ahead of the timing, this many at once "
                  "(-1: half the host's hardware threads, none below 8; 0: none ahead)")
      ->default_val(-1);
  cmd->add_flag("--force", args->force, "measure tasks already stored for this device again");
  cmd->add_flag("--stored-only", args->stored_only,
                "measure nothing: report what is stored for this device (status missing for "
                "the rest)");
  AddDbOption(cmd, args->db);
  cmd->add_flag("--json", args->json, "print exactly one JSON object on stdout");
  AddConfigFlags(cmd, args->config);
  cmd->callback([&table, args] { table.selected = [args] { return RunBaseline(*args); }; });
}

}  // namespace kforge::cli
