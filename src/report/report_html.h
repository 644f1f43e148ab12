// `kforge report --html FILE`: self-contained HTML pages (inline CSS and
// SVG, no scripts, no fetches; a Content-Security-Policy forbids both).
//
// A run report is one file: charts, the candidate table, the events, and a
// section per candidate (anchor #c-<id>) with its code, a diff against its
// first parent, integrity flags, timings, the profile summary when the eval
// JSON has one, and the eval JSON itself. A bench report is one file with the
// suite's metrics and charts, plus one run report per task in a sibling
// directory <stem>_runs/<run_id>.html, linked from the task table.
#pragma once

#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "common/result.h"
#include "report/report_data.h"
#include "store/store.h"

namespace kforge::report {

struct HtmlPageOptions {
  std::string generated_at;  // shown in the footer; IsoUtcNow() when empty
  std::string back_href;     // a link back to the bench report (run pages of a bench)
  std::string back_label;
  // Where a task's run page lives (bench reports); no link when empty.
  std::function<std::string(const std::string& run_id)> run_href;
};

std::string RenderRunHtml(const RunReport& report, const HtmlPageOptions& options = {});
std::string RenderBenchHtml(const BenchReport& report, const HtmlPageOptions& options = {});

// Longest string shown in a candidate's eval JSON (compile logs can run to
// megabytes); longer ones are cut with a note saying how much was left out.
constexpr size_t kMaxJsonStringChars = 8000;

struct HtmlOutput {
  std::filesystem::path main;
  std::vector<std::filesystem::path> pages;  // run pages of a bench
};

// The bench's run pages go to this directory, beside `file`.
std::filesystem::path RunPagesDir(const std::filesystem::path& file);

// Loads the run or bench and writes its pages (each written atomically).
Result<HtmlOutput> WriteHtmlReport(Store& store, ReportKind kind, const std::string& id,
                                   const std::filesystem::path& file,
                                   const MetricsOptions& options);

}  // namespace kforge::report
