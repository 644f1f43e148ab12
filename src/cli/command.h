// Each subcommand lives in its own cmd_*.cc and registers itself here. The
// selected command's body runs after parsing, inside main's error boundary.
#pragma once

#include <CLI/CLI.hpp>

#include <functional>
#include <string>

#include "common/result.h"

namespace kforge::cli {

struct CommandTable {
  // Set by the subcommand's parse callback; returns the process exit code.
  std::function<int()> selected;
};

// Adds "--config FILE" and repeatable "--set KEY=VALUE" to a subcommand.
struct ConfigFlags {
  std::string config_file;
  std::vector<std::string> sets;
};
void AddConfigFlags(CLI::App* cmd, ConfigFlags& flags);

// "--db PATH_OR_URL" (env KFORGE_DB, default ./kforge.db) for the run commands.
void AddDbOption(CLI::App* cmd, std::string& db);

// Ends a command whose expected errors travel as values.
inline void ThrowIfError(const Status& status) {
  if (!status) throw OperationError{status.error()};
}

void AddEvalCommand(CLI::App& root, CommandTable& table);
void AddConfigCommand(CLI::App& root, CommandTable& table);
void AddLlmCommand(CLI::App& root, CommandTable& table);
void AddAuditCommand(CLI::App& root, CommandTable& table);
void AddTasksCommand(CLI::App& root, CommandTable& table);
void AddOptimizeCommand(CLI::App& root, CommandTable& table);
void AddResumeCommand(CLI::App& root, CommandTable& table);
void AddShowCommand(CLI::App& root, CommandTable& table);
void AddBestCommand(CLI::App& root, CommandTable& table);
void AddRunsCommand(CLI::App& root, CommandTable& table);
void AddReportCommand(CLI::App& root, CommandTable& table);
void AddProfileCommand(CLI::App& root, CommandTable& table);
void AddKbCommand(CLI::App& root, CommandTable& table);
void AddBaselineCommand(CLI::App& root, CommandTable& table);
void AddBenchCommand(CLI::App& root, CommandTable& table);
void AddServeCommand(CLI::App& root, CommandTable& table);
void AddExportCommand(CLI::App& root, CommandTable& table);

}  // namespace kforge::cli
