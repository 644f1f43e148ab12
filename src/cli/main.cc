#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <exception>

#include "cli/command.h"
#include "common/result.h"

namespace {

std::string VersionLine() {
  return fmt::format("kforge {} ({})", KFORGE_VERSION, KFORGE_GIT_SHA);
}

}  // namespace

int main(int argc, char** argv) {
  using kforge::cli::CommandTable;
  CLI::App app{"kforge: LLM-driven CUDA kernel optimization with proven speedups"};
  app.set_version_flag("--version", VersionLine());
  app.require_subcommand(1);
  CommandTable table;
  kforge::cli::AddEvalCommand(app, table);
  kforge::cli::AddConfigCommand(app, table);
  kforge::cli::AddLlmCommand(app, table);
  kforge::cli::AddAuditCommand(app, table);
  kforge::cli::AddTasksCommand(app, table);
  kforge::cli::AddOptimizeCommand(app, table);
  kforge::cli::AddResumeCommand(app, table);
  kforge::cli::AddShowCommand(app, table);
  kforge::cli::AddBestCommand(app, table);
  kforge::cli::AddRunsCommand(app, table);
  kforge::cli::AddReportCommand(app, table);
  kforge::cli::AddProfileCommand(app, table);
  kforge::cli::AddKbCommand(app, table);
  kforge::cli::AddBaselineCommand(app, table);
  kforge::cli::AddBenchCommand(app, table);
  kforge::cli::AddServeCommand(app, table);
  kforge::cli::AddExportCommand(app, table);

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "kforge: error: %s\n", e.what());
    return 2;
  }
  if (!table.selected) {
    std::fprintf(stderr, "kforge: error: no command given (see kforge --help)\n");
    return 2;
  }
  try {
    return table.selected();
  } catch (const kforge::OperationError& e) {
    std::fprintf(stderr, "kforge: error: %s\n", e.error.message.c_str());
    return e.error.kind == kforge::ErrorKind::kBadInput ||
                   e.error.kind == kforge::ErrorKind::kNotFound
               ? 2
               : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "kforge: internal error: %s\n", e.what());
    return 1;
  }
}
