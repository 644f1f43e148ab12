#include "kb/performance_state.h"

#include <fmt/format.h>

#include <algorithm>

namespace kforge::kb {

namespace {

bool Known(double pct) {
  return pct >= 0;
}

std::string StallText(const KernelProfile& k) {
  if (k.top_stalls.empty()) return "";
  return fmt::format("top stall {} ({:.0f}% of stalls)", k.top_stalls.front().first,
                     k.top_stalls.front().second);
}

}  // namespace

StateClassification ClassifyKernel(const KernelProfile& k, const StateRules& r) {
  const double mem = k.memory_sol_pct, comp = k.compute_sol_pct;
  if (k.duration_us > 0 && k.duration_us < r.launch_bound_us) {
    return {kLaunchBound,
            fmt::format("{:.1f} us per launch, {} launch(es): launch overhead dominates",
                        k.duration_us, k.launches),
            ""};
  }
  if (!Known(mem) || !Known(comp)) {
    return {kUnknown, "no speed-of-light metrics in the profile", ""};
  }
  const std::string sol = fmt::format("memory {:.0f}% / compute {:.0f}% of peak", mem, comp);
  if (mem >= r.high_sol_pct && comp >= r.high_sol_pct) {
    return {kNearRoofline, sol + ": both units busy", StallText(k)};
  }
  if (mem >= r.high_sol_pct && mem >= comp + r.dominance_pct) {
    std::string second =
        Known(k.dram_throughput_pct)
            ? fmt::format("DRAM {:.0f}%, L2 {:.0f}%", k.dram_throughput_pct, k.l2_throughput_pct)
            : StallText(k);
    return {kMemoryBound, sol, second};
  }
  if (comp >= r.high_sol_pct && comp >= mem + r.dominance_pct) {
    return {kComputeBound, sol, StallText(k)};
  }
  if (mem < r.low_sol_pct && comp < r.low_sol_pct) {
    bool few_warps =
        Known(k.achieved_occupancy_pct) && k.achieved_occupancy_pct < r.low_occupancy_pct;
    if (few_warps || k.registers_per_thread > r.high_registers) {
      return {kOccupancyLimited,
              fmt::format("{}; achieved occupancy {:.0f}%, {} registers per thread", sol,
                          k.achieved_occupancy_pct, k.registers_per_thread),
              StallText(k)};
    }
    return {kLatencyBound, sol + ": neither unit busy with enough warps", StallText(k)};
  }
  // Between the thresholds: the busier unit is the better lead.
  return {mem >= comp ? kMemoryBound : kComputeBound, sol + " (moderate)", StallText(k)};
}

StateClassification ClassifyProgram(const std::vector<KernelProfile>& kernels,
                                    const StateRules& rules) {
  if (kernels.empty()) return {kUnknown, "no kernels in the profile", ""};
  auto total = [](const KernelProfile& k) { return k.duration_us * std::max(k.launches, 1); };
  const KernelProfile& top = *std::max_element(
      kernels.begin(), kernels.end(),
      [&](const KernelProfile& a, const KernelProfile& b) { return total(a) < total(b); });
  StateClassification c = ClassifyKernel(top, rules);
  c.primary = fmt::format("{}: {}", top.name, c.primary);
  return c;
}

std::string SummarizeProfiles(const std::vector<KernelProfile>& kernels, size_t max_kernels) {
  std::vector<const KernelProfile*> order;
  for (const auto& k : kernels) order.push_back(&k);
  std::stable_sort(order.begin(), order.end(), [](const KernelProfile* a, const KernelProfile* b) {
    return a->duration_us * std::max(a->launches, 1) > b->duration_us * std::max(b->launches, 1);
  });
  std::string out;
  for (size_t i = 0; i < order.size() && i < max_kernels; ++i) {
    const KernelProfile& k = *order[i];
    StateClassification c = ClassifyKernel(k);
    out += fmt::format("kernel {} ({} launch(es), {:.2f} us each): state {}\n", k.name, k.launches,
                       k.duration_us, c.state);
    if (Known(k.memory_sol_pct) && Known(k.compute_sol_pct)) {
      out += fmt::format("  speed of light: memory {:.1f}%, compute {:.1f}%\n", k.memory_sol_pct,
                         k.compute_sol_pct);
    }
    if (Known(k.dram_throughput_pct) || Known(k.l2_throughput_pct)) {
      out +=
          fmt::format("  DRAM {:.1f}%, L2 {:.1f}%\n", k.dram_throughput_pct, k.l2_throughput_pct);
    }
    if (Known(k.achieved_occupancy_pct)) {
      out += fmt::format("  achieved occupancy {:.1f}%, {} registers per thread\n",
                         k.achieved_occupancy_pct, k.registers_per_thread);
    }
    for (size_t s = 0; s < k.top_stalls.size() && s < 3; ++s) {
      out += fmt::format("  stall {}: {:.1f}%\n", k.top_stalls[s].first, k.top_stalls[s].second);
    }
  }
  if (order.size() > max_kernels) {
    out += fmt::format("({} more kernels not shown)\n", order.size() - max_kernels);
  }
  return out;
}

}  // namespace kforge::kb
