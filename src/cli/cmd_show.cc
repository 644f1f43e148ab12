// kforge show RUN_ID [--json]: one run's evaluations, events and best (CONTRACT.md).
#include <iostream>

#include "cli/command.h"
#include "cli/config_setup.h"
#include "llm/types.h"
#include "run/run_report.h"
#include "run/run_store.h"

namespace kforge::cli {

namespace {

struct ShowArgs {
  std::string run_id;
  std::string db = run::kDefaultDb;
  bool json = false;
  ConfigFlags config;
};

int RunShow(const ShowArgs& a) {
  Config config = LoadConfig(a.config);
  auto store = run::OpenRunStore(a.db, /*create=*/false, config);
  if (!store) throw OperationError{store.error()};
  if (a.json) {
    auto j = run::ShowJson(**store, a.run_id);
    if (!j) throw OperationError{j.error()};
    std::cout << llm::DumpJson(*j) << std::endl;
    return 0;
  }
  auto text = run::ShowText(**store, a.run_id);
  if (!text) throw OperationError{text.error()};
  std::cout << *text;
  return 0;
}

}  // namespace

void AddShowCommand(CLI::App& root, CommandTable& table) {
  auto args = std::make_shared<ShowArgs>();
  CLI::App* cmd = root.add_subcommand("show", "Show one run: evaluations, events, best");
  cmd->add_option("RUN_ID", args->run_id, "The run")->required();
  AddDbOption(cmd, args->db);
  cmd->add_flag("--json", args->json, "Print one JSON object on stdout");
  AddConfigFlags(cmd, args->config);
  cmd->callback([&table, args] { table.selected = [args] { return RunShow(*args); }; });
}

}  // namespace kforge::cli
