// kforge report RUN_OR_BENCH_ID (--html FILE | --json | --csv FILE): a run's or
// a bench's report (CONTRACT.md); terminal tables without a format flag.
#include <fmt/format.h>

#include <filesystem>
#include <iostream>

#include "cli/command.h"
#include "cli/config_setup.h"
#include "common/files.h"
#include "report/report_csv.h"
#include "report/report_data.h"
#include "report/report_html.h"
#include "report/report_json.h"
#include "report/report_text.h"
#include "run/run_store.h"

namespace kforge::cli {

namespace {

struct ReportArgs {
  std::string id;
  std::string db = run::kDefaultDb;
  std::string html;
  std::string csv;
  bool json = false;
  bool include_suspect = false;
  ConfigFlags config;
};

// "-" writes to stdout; a file's directory must exist.
void WriteOutput(const std::string& path, const std::string& text) {
  if (path == "-") {
    std::cout << text;
    return;
  }
  std::filesystem::path file(path);
  std::filesystem::path dir = file.has_parent_path() ? file.parent_path() : ".";
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) {
    throw OperationError{Error::BadInput(
        fmt::format("cannot write {}: directory {} does not exist", path, dir.string()))};
  }
  ThrowIfError(WriteFileAtomic(file, text));
}

int WriteHtml(Store& store, report::ReportKind kind, const ReportArgs& a,
              const report::MetricsOptions& options) {
  std::filesystem::path file(a.html);
  std::filesystem::path dir = file.has_parent_path() ? file.parent_path() : ".";
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) {
    throw OperationError{Error::BadInput(
        fmt::format("cannot write {}: directory {} does not exist", a.html, dir.string()))};
  }
  auto out = report::WriteHtmlReport(store, kind, a.id, file, options);
  if (!out) throw OperationError{out.error()};
  std::cout << "wrote " << out->main.string();
  if (!out->pages.empty()) {
    std::cout << fmt::format(" and {} run pages in {}", out->pages.size(),
                             report::RunPagesDir(file).string());
  }
  std::cout << std::endl;
  return 0;
}

int RunReport(const ReportArgs& a) {
  Config config = LoadConfig(a.config);
  auto store = run::OpenRunStore(a.db, /*create=*/false, config);
  if (!store) throw OperationError{store.error()};
  auto kind = report::ResolveReportId(**store, a.id);
  if (!kind) throw OperationError{kind.error()};
  report::MetricsOptions options;
  options.include_suspect = a.include_suspect;
  if (!a.html.empty()) return WriteHtml(**store, *kind, a, options);

  if (*kind == report::ReportKind::kRun) {
    auto r = report::LoadRunReport(**store, a.id, options);
    if (!r) throw OperationError{r.error()};
    if (a.json) {
      std::cout << report::RunReportJson(*r).dump(2, ' ', false,
                                                  nlohmann::json::error_handler_t::replace)
                << std::endl;
    } else if (!a.csv.empty()) {
      WriteOutput(a.csv, report::RunReportCsv(*r));
    } else {
      std::cout << report::RunReportText(*r);
    }
    return 0;
  }
  auto r = report::LoadBenchReport(**store, a.id, options);
  if (!r) throw OperationError{r.error()};
  if (a.json) {
    std::cout << report::BenchReportJson(*r).dump(2, ' ', false,
                                                  nlohmann::json::error_handler_t::replace)
              << std::endl;
  } else if (!a.csv.empty()) {
    WriteOutput(a.csv, report::BenchReportCsv(*r));
  } else {
    std::cout << report::BenchReportText(*r);
  }
  return 0;
}

}  // namespace

void AddReportCommand(CLI::App& root, CommandTable& table) {
  auto args = std::make_shared<ReportArgs>();
  CLI::App* cmd = root.add_subcommand(
      "report", "Report on a run or a bench: terminal tables, --html, --json or --csv");
  cmd->add_option("RUN_OR_BENCH_ID", args->id, "A run id or a bench id")->required();
  AddDbOption(cmd, args->db);
  CLI::Option* html = cmd->add_option(
      "--html", args->html,
      "Write a self-contained HTML report to FILE (a bench also writes FILE-stem_runs/)");
  CLI::Option* json = cmd->add_flag("--json", args->json, "Print one JSON object on stdout");
  CLI::Option* csv = cmd->add_option(
      "--csv", args->csv, "Write one CSV row per candidate or task to FILE (- for stdout)");
  html->excludes(json)->excludes(csv);
  json->excludes(csv);
  cmd->add_flag("--include-suspect", args->include_suspect,
                "Count suspect results in headline numbers (they are shown either way)");
  AddConfigFlags(cmd, args->config);
  cmd->callback([&table, args] { table.selected = [args] { return RunReport(*args); }; });
}

}  // namespace kforge::cli
