// kforge resume RUN_ID: continue a stopped, failed or killed run until it has
// its N evaluations (CONTRACT.md). Nothing recorded is lost or repeated.
#include <fmt/format.h>

#include "cli/command.h"
#include "cli/config_setup.h"
#include "cli/run_output.h"
#include "run/run_launcher.h"
#include "run/run_report.h"
#include "run/run_store.h"
#include "run/signal_stop.h"

namespace kforge::cli {

namespace {

struct ResumeArgs {
  std::string run_id;
  std::string db = run::kDefaultDb;
  double budget_usd = 0;
  int64_t budget_tokens = 0;
  bool json = false;
  ConfigFlags config;
};

int RunResume(const ResumeArgs& a) {
  // The run's recorded config applies; --set and the budget flags override it.
  Config config = LoadConfig(a.config);
  auto store = run::OpenRunStore(a.db, /*create=*/false, config);
  if (!store) throw OperationError{store.error()};
  run::ResumeRequest request;
  request.run_id = a.run_id;
  request.overrides = a.config.sets;
  if (a.budget_usd < 0 || a.budget_tokens < 0) {
    throw OperationError{Error::BadInput("--budget-usd and --budget-tokens cannot be negative")};
  }
  if (a.budget_usd > 0) request.overrides.push_back(fmt::format("llm.budget.usd={}", a.budget_usd));
  if (a.budget_tokens > 0) {
    request.overrides.push_back(fmt::format("llm.budget.tokens={}", a.budget_tokens));
  }

  run::StopRequest stop;
  run::SignalStop signals(stop);
  run::TerminalProgress progress;
  auto end = run::ResumeRun(**store, request, stop, progress);
  if (!end) throw OperationError{end.error()};
  return FinishRunCommand(**store, *end, a.json);
}

}  // namespace

void AddResumeCommand(CLI::App& root, CommandTable& table) {
  auto args = std::make_shared<ResumeArgs>();
  CLI::App* cmd = root.add_subcommand("resume", "Continue a stopped or killed run");
  cmd->add_option("RUN_ID", args->run_id, "The run to continue")->required();
  AddDbOption(cmd, args->db);
  cmd->add_option("--budget-usd", args->budget_usd, "A new LLM cost cap in USD for the whole run");
  cmd->add_option("--budget-tokens", args->budget_tokens, "A new LLM token cap for the whole run");
  cmd->add_flag("--json", args->json, "Print one JSON object on stdout when the run ends");
  AddConfigFlags(cmd, args->config);
  cmd->callback([&table, args] { table.selected = [args] { return RunResume(*args); }; });
}

}  // namespace kforge::cli
