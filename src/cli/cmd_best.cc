// kforge best RUN_ID --out DIR: the run's best accepted candidate as files,
// including model_new.py, a drop-in module for the task (CONTRACT.md).
#include <fmt/format.h>

#include <iostream>

#include "cli/command.h"
#include "cli/config_setup.h"
#include "run/run_report.h"
#include "run/run_store.h"

namespace kforge::cli {

namespace {

struct BestArgs {
  std::string run_id;
  std::string out;
  std::string db = run::kDefaultDb;
  ConfigFlags config;
};

int RunBest(const BestArgs& a) {
  Config config = LoadConfig(a.config);
  auto store = run::OpenRunStore(a.db, /*create=*/false, config);
  if (!store) throw OperationError{store.error()};
  auto exported = run::ExportBest(**store, a.run_id, a.out);
  if (!exported) throw OperationError{exported.error()};
  std::cout << fmt::format("{}\n{}\n", exported->model_new_path.string(),
                           exported->source_path.string());
  std::cerr << fmt::format("kforge: candidate {} ({:.2f}x vs eager PyTorch) written to {}\n",
                           exported->candidate_id, exported->speedup_eager, a.out);
  return 0;
}

}  // namespace

void AddBestCommand(CLI::App& root, CommandTable& table) {
  auto args = std::make_shared<BestArgs>();
  CLI::App* cmd = root.add_subcommand("best", "Write a run's best candidate and model_new.py");
  cmd->add_option("RUN_ID", args->run_id, "The run")->required();
  cmd->add_option("--out", args->out, "Directory to write into (created if missing)")->required();
  AddDbOption(cmd, args->db);
  AddConfigFlags(cmd, args->config);
  cmd->callback([&table, args] { table.selected = [args] { return RunBest(*args); }; });
}

}  // namespace kforge::cli
