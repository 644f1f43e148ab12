// `kforge report --json`: the run or bench report as one JSON object
// (docs/report.md lists the fields).
#pragma once

#include <nlohmann/json.hpp>

#include "report/report_data.h"

namespace kforge::report {

// {"kind": "run", "run_id", "status", "task", ..., "summary", "best", "candidates",
//  "islands", "events", "cost"}
nlohmann::json RunReportJson(const RunReport& report);
// {"kind": "bench", "bench_id", ..., "tasks": [...], "metrics": {...}, "cost"}
nlohmann::json BenchReportJson(const BenchReport& report);

// One task as `bench --json` lists it: {"task", "run_id", "status", "best": {...} | null,
// "degenerate", ...}.
nlohmann::json TaskOutcomeJson(const TaskOutcome& outcome, const MetricsOptions& options);

}  // namespace kforge::report
