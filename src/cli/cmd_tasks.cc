// kforge tasks scan: the degeneracy scan of a suite's references (issue 3,
// docs/integrity.md "Degenerate tasks"). Runs only the clean reference process
// over the correctness seeds; a task that fails to load is reported and the
// scan goes on.
#include <fmt/format.h>

#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli/command.h"
#include "cli/config_setup.h"
#include "cli/suite_entries.h"
#include "common/files.h"
#include "common/line_printer.h"
#include "eval/evaluator.h"
#include "eval/task_scan.h"
#include "task/task.h"

namespace kforge::cli {

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

struct TasksScanArgs {
  std::string suite, device = "auto", dtype;
  int gpu = 0;
  int trials = 0;
  uint64_t seed = 42;
  bool json = false;
  ConfigFlags config;
};

int RunTasksScan(const TasksScanArgs& a) {
  Config config = LoadConfig(a.config);
  EvalOptions opt = EvalOptionsFromConfig(config);
  if (a.device != "auto" && a.device != "cuda" && a.device != "cpu") {
    throw OperationError{
        Error::BadInput(fmt::format("--device must be auto, cuda or cpu, not '{}'", a.device))};
  }
  opt.device = a.device;
  opt.gpu = a.gpu;
  if (a.trials > 0) opt.trials = a.trials;
  if (opt.trials < 1) throw OperationError{Error::BadInput("--trials must be at least 1")};
  opt.seed = a.seed;
  if (!a.dtype.empty()) opt.dtype = a.dtype;

  std::vector<SuiteEntry> entries = ReadSuite(a.suite);
  TaskScanner scanner(opt);
  json tasks = json::array();
  std::map<std::string, int> by_kind;
  json degenerate_names = json::array();
  int degenerate = 0, errors = 0, n = 0;
  auto& printer = LinePrinter::Get();
  for (const auto& e : entries) {
    ++n;
    TaskScanResult r;
    if (e.task) {
      printer.Status(fmt::format("[{}/{}] {}", n, entries.size(), e.task->name));
      r = scanner.Scan(*e.task);
    } else {
      r.name = e.path.stem().string();
      r.path = e.path;
      r.error = e.error;
      r.error_kind = "bad_task";
    }
    if (r.error) {
      ++errors;
    } else if (r.degenerate) {
      ++degenerate;
      ++by_kind[r.degeneracy->kind];
      degenerate_names.push_back(r.name);
    }
    std::string verdict = r.error ? "ERROR " + r.error_kind : r.degenerate ? "DEGENERATE" : "ok";
    std::string why = r.error ? *r.error : r.degenerate ? r.degeneracy->reason : "";
    printer.Line(fmt::format("{:<52} {:<12} {:6.1f}s  {}", r.name, verdict, r.seconds, why));
    tasks.push_back(r.ToJson());
  }
  json summary = {
      {"tasks", n},       {"scanned", n - errors}, {"degenerate", degenerate},
      {"errors", errors}, {"by_kind", by_kind},    {"degenerate_tasks", degenerate_names}};
  if (a.json) {
    json out = {{"kforge_version", KFORGE_VERSION},
                {"suite", a.suite},
                {"device", scanner.device().is_null() ? json(nullptr) : scanner.device()},
                {"seed", opt.seed},
                {"trials", opt.trials},
                {"tasks", tasks},
                {"summary", summary}};
    std::cout << out.dump(2) << std::endl;
  } else {
    std::cout << fmt::format("{} tasks: {} degenerate, {} could not be scanned\n", n, degenerate,
                             errors);
    for (const auto& t : tasks) {
      if (t["degenerate"].get<bool>()) {
        std::cout << fmt::format("  {}: {}\n", t["task"].get<std::string>(),
                                 t["reason"].get<std::string>());
      }
    }
  }
  return 0;
}

}  // namespace

void AddTasksCommand(CLI::App& root, CommandTable& table) {
  CLI::App* tasks = root.add_subcommand("tasks", "Inspect task suites");
  tasks->require_subcommand(1);
  auto args = std::make_shared<TasksScanArgs>();
  CLI::App* scan = tasks->add_subcommand(
      "scan", "Run each task's reference over the correctness seeds and report degeneracy");
  scan->add_option("--suite", args->suite,
                   "Directory of task files (searched recursively) or a text file listing them")
      ->required();
  scan->add_option("--device", args->device, "auto|cuda|cpu")
      ->envname("KFORGE_DEVICE")
      ->default_val("auto");
  scan->add_option("--gpu", args->gpu, "GPU index")->envname("KFORGE_GPU")->default_val(0);
  scan->add_option("--trials", args->trials, "input seeds as in eval (default: eval.trials = 5)");
  scan->add_option("--seed", args->seed, "base seed")->default_val(42);
  scan->add_option("--dtype", args->dtype, "run the tasks in float32|float16|bfloat16");
  scan->add_flag("--json", args->json, "print exactly one JSON object on stdout");
  AddConfigFlags(scan, args->config);
  scan->callback([&table, args] { table.selected = [args] { return RunTasksScan(*args); }; });
}

}  // namespace kforge::cli
