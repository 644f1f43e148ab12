// `kforge report ID` without a format flag: terminal tables.
#pragma once

#include <string>

#include "report/report_data.h"

namespace kforge::report {

std::string RunReportText(const RunReport& report);
std::string BenchReportText(const BenchReport& report);

}  // namespace kforge::report
