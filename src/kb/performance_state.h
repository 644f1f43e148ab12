// Performance states (KernelBlaster §3): a kernel's Nsight Compute metrics,
// and the rule-based classification of the kernel into the state that keys
// the knowledge base.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace kforge::kb {

// What the profile step collects per kernel (ncu, `--clock-control none`).
// Percentages are 0–100; a metric ncu did not report is negative.
struct KernelProfile {
  std::string name;
  int launches = 0;
  double duration_us = 0;       // mean per launch
  double compute_sol_pct = -1;  // sm__throughput, % of peak
  double memory_sol_pct = -1;   // gpu__compute_memory_throughput, % of peak
  double achieved_occupancy_pct = -1;
  int registers_per_thread = -1;
  double l2_throughput_pct = -1;
  double dram_throughput_pct = -1;
  // Warp stall reasons, largest share first: (reason, % of stalled cycles).
  std::vector<std::pair<std::string, double>> top_stalls;
};

// The states the rules can name. The knowledge base may hold more (states an
// LLM discovered); these are the ones a profile alone decides.
inline constexpr const char* kMemoryBound = "memory_bound";
inline constexpr const char* kComputeBound = "compute_bound";
inline constexpr const char* kNearRoofline = "near_roofline";
inline constexpr const char* kLatencyBound = "latency_bound";
inline constexpr const char* kOccupancyLimited = "occupancy_limited";
inline constexpr const char* kLaunchBound = "launch_overhead_bound";
inline constexpr const char* kUnknown = "unknown";

struct StateClassification {
  std::string state;
  std::string primary;    // the bottleneck, in words, with the numbers behind it
  std::string secondary;  // the next one (may be empty)
};

// Thresholds of the rules, named so tests and docs can cite them.
struct StateRules {
  double launch_bound_us = 5.0;     // a launch this short is mostly overhead
  double high_sol_pct = 60.0;       // a unit this busy is the limiter
  double dominance_pct = 10.0;      // ... when ahead of the other by this much
  double low_sol_pct = 40.0;        // both below: neither unit is the limiter
  double low_occupancy_pct = 25.0;  // too few warps to hide latency
  int high_registers = 128;         // registers that cap occupancy
};

StateClassification ClassifyKernel(const KernelProfile& k, const StateRules& rules = {});

// The state of a whole candidate: that of the kernel with the most total
// time (launches × duration), since it bounds what an optimization can gain.
StateClassification ClassifyProgram(const std::vector<KernelProfile>& kernels,
                                    const StateRules& rules = {});

// The "details" text for prompts: one block per kernel, longest first.
std::string SummarizeProfiles(const std::vector<KernelProfile>& kernels, size_t max_kernels = 5);

}  // namespace kforge::kb
