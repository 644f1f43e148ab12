// kforge export RUN|BENCH --format sft|rft|grpo|dpo: training data as JSON
// Lines (docs/rl.md).
#include <fmt/format.h>

#include <cstdio>
#include <filesystem>
#include <iostream>

#include "cli/command.h"
#include "cli/config_setup.h"
#include "common/files.h"
#include "rl/training_export.h"
#include "rl/training_sample.h"
#include "run/run_store.h"

namespace kforge::cli {

namespace {

struct ExportArgs {
  std::string id;
  std::string format;
  std::string db = run::kDefaultDb;
  std::string out;
  bool include_suspect = false;
  ConfigFlags config;
};

int RunExport(const ExportArgs& a) {
  auto format = rl::ParseExportFormat(a.format);
  if (!format) throw OperationError{format.error()};
  if (!a.out.empty()) {
    std::filesystem::path file(a.out);
    std::filesystem::path dir = file.has_parent_path() ? file.parent_path() : ".";
    std::error_code ec;
    if (!std::filesystem::is_directory(dir, ec)) {
      throw OperationError{Error::BadInput(
          fmt::format("cannot write {}: directory {} does not exist", a.out, dir.string()))};
    }
  }
  Config config = LoadConfig(a.config);
  auto store = run::OpenRunStore(a.db, /*create=*/false, config);
  if (!store) throw OperationError{store.error()};
  auto loaded = rl::LoadTrainingSamples(**store, a.id);
  if (!loaded) throw OperationError{loaded.error()};

  rl::ExportOptions options;
  options.include_suspect = a.include_suspect;
  rl::ExportSummary summary;
  std::vector<nlohmann::json> records =
      rl::ExportRecords(loaded->samples, *format, options, &summary);
  std::string text;
  for (const nlohmann::json& r : records) {
    text += r.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    text += '\n';
  }
  if (a.out.empty()) {
    std::cout << text << std::flush;
  } else {
    ThrowIfError(WriteFileAtomic(a.out, text));
  }
  // One summary line on stderr, so stdout stays pure JSON Lines.
  std::string line =
      fmt::format("kforge export: {} {} record(s) from {} sample(s) of {}", summary.records,
                  rl::ExportFormatName(*format), summary.samples, a.id);
  if (loaded->without_prompt) {
    line += fmt::format("; {} without a recorded prompt left out", loaded->without_prompt);
  }
  if (summary.suspect) line += fmt::format("; {} suspect left out", summary.suspect);
  if (summary.degenerate) line += fmt::format("; {} degenerate left out", summary.degenerate);
  if (!a.out.empty()) line += " -> " + a.out;
  std::fprintf(stderr, "%s\n", line.c_str());
  return 0;
}

}  // namespace

void AddExportCommand(CLI::App& root, CommandTable& table) {
  auto args = std::make_shared<ExportArgs>();
  CLI::App* cmd = root.add_subcommand(
      "export", "Export a run's or a bench's samples as training data (JSON Lines)");
  cmd->add_option("RUN_OR_BENCH_ID", args->id, "A run id or a bench id")->required();
  cmd->add_option("--format", args->format, "sft|rft|grpo|dpo (docs/rl.md)")->required();
  AddDbOption(cmd, args->db);
  cmd->add_option("--out", args->out, "Write to FILE instead of stdout");
  cmd->add_flag("--include-suspect", args->include_suspect,
                "Keep samples whose evaluation is suspect (left out by default)");
  AddConfigFlags(cmd, args->config);
  cmd->callback([&table, args] { table.selected = [args] { return RunExport(*args); }; });
}

}  // namespace kforge::cli
