// kforge optimize: the main job. Starts a run (CONTRACT.md) and drives it to
// N evaluations; Ctrl-C stops it cleanly and `kforge resume` continues it.
#include <fmt/format.h>

#include <iostream>

#include "cli/command.h"
#include "cli/config_setup.h"
#include "cli/run_output.h"
#include "run/run_launcher.h"
#include "run/run_report.h"
#include "run/run_store.h"
#include "run/signal_stop.h"

namespace kforge::cli {

namespace {

struct OptimizeArgs {
  std::string task, llm, strategy = "greedy", device = "auto", policy = "strict";
  std::string db = run::kDefaultDb;
  int64_t iterations = 10;
  int islands = 0;
  int gpu = -1;
  uint64_t seed = 0;
  double budget_usd = 0;
  int64_t budget_tokens = 0;
  bool json = false;
  ConfigFlags config;
};

int RunOptimize(const OptimizeArgs& a) {
  Config config = LoadConfig(a.config);
  if (a.budget_usd < 0 || a.budget_tokens < 0) {
    throw OperationError{Error::BadInput("--budget-usd and --budget-tokens cannot be negative")};
  }
  if (a.budget_usd > 0) ThrowIfError(config.Set("llm.budget.usd", fmt::format("{}", a.budget_usd)));
  if (a.budget_tokens > 0) {
    ThrowIfError(config.Set("llm.budget.tokens", std::to_string(a.budget_tokens)));
  }
  auto store = run::OpenRunStore(a.db, /*create=*/true, config);
  if (!store) throw OperationError{store.error()};

  run::OptimizeRequest request;
  request.task_path = a.task;
  request.llm_spec = a.llm;
  request.strategy = a.strategy;
  request.iterations = a.iterations;
  request.islands = a.islands;
  request.device = a.device;
  request.gpu = a.gpu;
  request.policy = a.policy;
  request.seed = a.seed;
  request.config = std::move(config);

  run::StopRequest stop;
  run::SignalStop signals(stop);
  run::TerminalProgress progress;
  auto end = run::StartOptimize(**store, std::move(request), stop, progress);
  if (!end) throw OperationError{end.error()};
  return FinishRunCommand(**store, *end, a.json);
}

}  // namespace

void AddOptimizeCommand(CLI::App& root, CommandTable& table) {
  auto args = std::make_shared<OptimizeArgs>();
  CLI::App* cmd =
      root.add_subcommand("optimize", "Search for a faster kernel for a task with an LLM");
  cmd->add_option("--task", args->task, "KernelBench-style task file (Model, get_inputs, ...)")
      ->required();
  cmd->add_option("--llm", args->llm,
                  "Model spec: openai:MODEL[@BASE_URL], anthropic:MODEL[@BASE_URL], replay:RUN_ID "
                  "(default: config llm.spec)");
  cmd->add_option("--strategy", args->strategy, "pacevolve|contrastive|greedy|best-of-n|agent")
      ->default_val("greedy");
  cmd->add_option("--iterations", args->iterations,
                  "Candidates sent to evaluation, compile failures included")
      ->default_val(10);
  cmd->add_option("--islands", args->islands,
                  "Islands (independent populations); 0: pacevolve.islands for pacevolve, 1 "
                  "otherwise")
      ->default_val(0);
  cmd->add_option("--device", args->device, "auto|cuda|cpu")
      ->envname("KFORGE_DEVICE")
      ->default_val("auto");
  cmd->add_option("--gpu", args->gpu, "Evaluate on this GPU only (default: one worker per GPU)")
      ->envname("KFORGE_GPU");
  cmd->add_option("--policy", args->policy, "strict|any")->default_val("strict");
  AddDbOption(cmd, args->db);
  cmd->add_option("--budget-usd", args->budget_usd,
                  "Stop (resumably) when LLM cost reaches this many USD (llm.budget.usd)");
  cmd->add_option("--budget-tokens", args->budget_tokens,
                  "Stop (resumably) at this many LLM tokens, in + out (llm.budget.tokens)");
  cmd->add_option("--seed", args->seed, "Seed of the search strategy")->default_val(0);
  cmd->add_flag("--json", args->json, "Print one JSON object on stdout when the run ends");
  AddConfigFlags(cmd, args->config);
  cmd->callback([&table, args] { table.selected = [args] { return RunOptimize(*args); }; });
}

}  // namespace kforge::cli
