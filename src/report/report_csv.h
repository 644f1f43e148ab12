// `kforge report --csv FILE`: one row per candidate (run) or per task
// (bench), RFC 4180 quoting, empty cells for unknown values.
#pragma once

#include <string>
#include <string_view>

#include "report/report_data.h"

namespace kforge::report {

std::string RunReportCsv(const RunReport& report);
std::string BenchReportCsv(const BenchReport& report);

// One field: quoted (with doubled quotes) when it holds a comma, a quote or a
// line break.
std::string CsvField(std::string_view value);

}  // namespace kforge::report
