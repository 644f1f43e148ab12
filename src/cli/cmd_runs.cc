// kforge runs [--json]: every run in the database, newest first (CONTRACT.md).
#include <iostream>

#include "cli/command.h"
#include "cli/config_setup.h"
#include "llm/types.h"
#include "run/run_report.h"
#include "run/run_store.h"

namespace kforge::cli {

namespace {

struct RunsArgs {
  std::string db = run::kDefaultDb;
  bool json = false;
  ConfigFlags config;
};

int RunRuns(const RunsArgs& a) {
  Config config = LoadConfig(a.config);
  auto store = run::OpenRunStore(a.db, /*create=*/false, config);
  if (!store) throw OperationError{store.error()};
  if (a.json) {
    auto j = run::RunsJson(**store);
    if (!j) throw OperationError{j.error()};
    std::cout << llm::DumpJson(*j) << std::endl;
    return 0;
  }
  auto text = run::RunsText(**store);
  if (!text) throw OperationError{text.error()};
  std::cout << *text;
  return 0;
}

}  // namespace

void AddRunsCommand(CLI::App& root, CommandTable& table) {
  auto args = std::make_shared<RunsArgs>();
  CLI::App* cmd = root.add_subcommand("runs", "List the runs in the database, newest first");
  AddDbOption(cmd, args->db);
  cmd->add_flag("--json", args->json, "Print one JSON array on stdout");
  AddConfigFlags(cmd, args->config);
  cmd->callback([&table, args] { table.selected = [args] { return RunRuns(*args); }; });
}

}  // namespace kforge::cli
