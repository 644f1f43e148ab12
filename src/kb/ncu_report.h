// Reading Nsight Compute results (KernelBlaster's profile step): the raw CSV
// page, `ncu --csv --page raw`, one row per profiled launch and one column per
// metric, with a row of units under the header. Launches of one kernel are
// folded into one KernelProfile.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "kb/performance_state.h"

namespace kforge::kb {

// The metric columns a KernelProfile is built from (ncu 2025.x names), so
// the profile step can ask ncu for exactly these sections.
inline constexpr const char* kMetricDuration = "gpu__time_duration.sum";
inline constexpr const char* kMetricComputeSol = "sm__throughput.avg.pct_of_peak_sustained_elapsed";
inline constexpr const char* kMetricMemorySol =
    "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed";
inline constexpr const char* kMetricOccupancy = "sm__warps_active.avg.pct_of_peak_sustained_active";
inline constexpr const char* kMetricRegisters = "launch__registers_per_thread";
inline constexpr const char* kMetricL2 = "lts__throughput.avg.pct_of_peak_sustained_elapsed";
inline constexpr const char* kMetricDram = "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed";
// Warp stall reasons: smsp__average_warps_issue_stalled_<reason>_per_issue_active.ratio
inline constexpr const char* kStallPrefix = "smsp__average_warps_issue_stalled_";
inline constexpr const char* kStallSuffix = "_per_issue_active.ratio";

// The ncu sections that collect the metrics above.
std::vector<std::string> ProfileSections();

// Parses the raw page. Percentages of launches of one kernel are averaged
// weighted by duration (a long launch says more about the kernel than a short
// one); registers are the maximum; stall reasons become shares of all stall
// cycles, largest first. Kernels come out in order of first launch.
// A document without the header, or without a duration column, is kBadInput;
// a metric column that is absent leaves its field unknown (negative).
Result<std::vector<KernelProfile>> ParseNcuRawCsv(std::string_view csv);

// The kernel's name without template arguments, parameters or return type,
// e.g. "void at::native::vectorized_elementwise_kernel<4, ...>(int, ...)" →
// "at::native::vectorized_elementwise_kernel".
std::string ShortKernelName(std::string_view demangled);

}  // namespace kforge::kb
