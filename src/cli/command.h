// Each subcommand lives in its own cmd_*.cc and registers itself here. The
// selected command's body runs after parsing, inside main's error boundary.
#pragma once

#include <CLI/CLI.hpp>

#include <functional>
#include <string>

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

void AddEvalCommand(CLI::App& root, CommandTable& table);
void AddConfigCommand(CLI::App& root, CommandTable& table);
void AddLlmCommand(CLI::App& root, CommandTable& table);

}  // namespace kforge::cli
