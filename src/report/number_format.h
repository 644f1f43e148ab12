// How the text and HTML printers write numbers (JSON and CSV keep full precision).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace kforge::report {

constexpr const char* kMissing = "-";

std::string FormatSpeedup(const std::optional<double>& speedup);  // "1.95x", "-"
std::string FormatRate(const std::optional<double>& rate);        // "60.0%", "-"
std::string FormatUsd(double usd);                                // "$0.0123", "$12.34"
std::string FormatCount(int64_t n);                               // "950", "12.3k", "4.1M"
std::string FormatSeconds(double seconds);                        // "42 s", "3.5 min", "1.2 h"
std::string FormatMs(const std::optional<double>& ms);            // "0.412 ms", "-"

}  // namespace kforge::report
