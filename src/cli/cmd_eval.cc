// kforge eval: evaluate one candidate against one task (CONTRACT.md).
#include <fmt/format.h>

#include <cstdio>
#include <iostream>

#include "cli/command.h"
#include "cli/config_setup.h"
#include "common/line_printer.h"
#include "eval/evaluator.h"

namespace kforge::cli {

namespace {

struct EvalArgs {
  std::string task, candidate, device = "auto", policy = "strict", dtype;
  int gpu = 0;
  int trials = 0;
  uint64_t seed = 42;
  bool no_baseline_cache = false;
  bool json = false;
  ConfigFlags config;
};

int RunEval(const EvalArgs& a) {
  Config config = LoadConfig(a.config);
  EvalOptions opt = EvalOptionsFromConfig(config);
  if (a.device != "auto" && a.device != "cuda" && a.device != "cpu") {
    throw OperationError{
        Error::BadInput(fmt::format("--device must be auto, cuda or cpu, not '{}'", a.device))};
  }
  if (a.policy != "strict" && a.policy != "any") {
    throw OperationError{
        Error::BadInput(fmt::format("--policy must be strict or any, not '{}'", a.policy))};
  }
  opt.device = a.device;
  opt.gpu = a.gpu;
  opt.policy = a.policy == "any" ? Policy::kAny : Policy::kStrict;
  if (a.trials > 0) opt.trials = a.trials;
  if (opt.trials < 1) throw OperationError{Error::BadInput("--trials must be at least 1")};
  opt.seed = a.seed;
  opt.use_baseline_cache = !a.no_baseline_cache;
  if (!a.dtype.empty()) opt.dtype = a.dtype;

  auto task = LoadTaskFile(a.task);
  if (!task) throw OperationError{task.error()};
  // The candidate's format depends on the device; "auto" resolves later, so
  // a .py candidate is read as kernelbench and re-labelled on a CPU run.
  auto candidate = LoadCandidateFile(a.candidate, a.device == "cpu" ? "cpu" : "cuda");
  if (!candidate) throw OperationError{candidate.error()};

  if (a.json) LinePrinter::Get().set_quiet(true);
  Evaluator evaluator(opt);
  EvalResult result = evaluator.Evaluate(*task, *candidate);
  if (result.device_kind == "cpu" && candidate->format == CandidateFormat::kKernelBench) {
    result.candidate_format = CandidateFormatName(CandidateFormat::kCpp);
  }
  if (a.json) {
    std::cout << result.ToJson().dump(2) << std::endl;
  } else {
    std::cout << result.ToText();
  }
  return 0;
}

}  // namespace

void AddEvalCommand(CLI::App& root, CommandTable& table) {
  auto args = std::make_shared<EvalArgs>();
  CLI::App* cmd = root.add_subcommand("eval", "Evaluate one candidate against one task");
  cmd->add_option("--task", args->task,
                  "KernelBench-style task file (Model, get_inputs, get_init_inputs)")
      ->required();
  cmd->add_option("--candidate", args->candidate, "Candidate: *.py (ModelNew) or *.cu (native)")
      ->required();
  cmd->add_option("--device", args->device, "auto|cuda|cpu")
      ->envname("KFORGE_DEVICE")
      ->default_val("auto");
  cmd->add_option("--gpu", args->gpu, "GPU index")->envname("KFORGE_GPU")->default_val(0);
  cmd->add_option("--policy", args->policy, "strict|any")->default_val("strict");
  cmd->add_option("--trials", args->trials,
                  "correctness trials with fresh seeds (default: eval.trials = 5)");
  cmd->add_option("--seed", args->seed, "base seed")->default_val(42);
  cmd->add_option("--dtype", args->dtype, "run the task in float32|float16|bfloat16");
  cmd->add_flag("--no-baseline-cache", args->no_baseline_cache, "re-measure every baseline");
  cmd->add_flag("--json", args->json, "print exactly one JSON object on stdout");
  AddConfigFlags(cmd, args->config);
  cmd->callback([&table, args] { table.selected = [args] { return RunEval(*args); }; });
}

}  // namespace kforge::cli
