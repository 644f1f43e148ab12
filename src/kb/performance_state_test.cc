#include "kb/performance_state.h"

#include <gtest/gtest.h>

namespace kforge::kb {
namespace {

KernelProfile Kernel(const std::string& name, double us, double mem, double comp) {
  KernelProfile k;
  k.name = name;
  k.launches = 1;
  k.duration_us = us;
  k.memory_sol_pct = mem;
  k.compute_sol_pct = comp;
  return k;
}

TEST(ClassifyKernel, NamesTheBusyUnit) {
  EXPECT_EQ(ClassifyKernel(Kernel("copy", 700, 91, 12)).state, kMemoryBound);
  EXPECT_EQ(ClassifyKernel(Kernel("gemm", 900, 35, 88)).state, kComputeBound);
  EXPECT_EQ(ClassifyKernel(Kernel("both", 900, 80, 75)).state, kNearRoofline);
}

TEST(ClassifyKernel, ShortLaunchesAreOverheadBound) {
  auto c = ClassifyKernel(Kernel("tiny", 2.5, 5, 3));
  EXPECT_EQ(c.state, kLaunchBound);
  EXPECT_NE(c.primary.find("2.5 us"), std::string::npos) << c.primary;
}

TEST(ClassifyKernel, IdleUnitsSplitByOccupancy) {
  KernelProfile k = Kernel("reduce", 300, 20, 15);
  k.achieved_occupancy_pct = 60;
  k.registers_per_thread = 40;
  EXPECT_EQ(ClassifyKernel(k).state, kLatencyBound);
  k.achieved_occupancy_pct = 12;
  EXPECT_EQ(ClassifyKernel(k).state, kOccupancyLimited);
  k.achieved_occupancy_pct = 60;
  k.registers_per_thread = 200;
  EXPECT_EQ(ClassifyKernel(k).state, kOccupancyLimited);
}

TEST(ClassifyKernel, BetweenThresholdsTheBusierUnitLeads) {
  auto c = ClassifyKernel(Kernel("mid", 100, 50, 30));
  EXPECT_EQ(c.state, kMemoryBound);
  EXPECT_NE(c.primary.find("moderate"), std::string::npos);
  EXPECT_EQ(ClassifyKernel(Kernel("mid", 100, 30, 52)).state, kComputeBound);
}

TEST(ClassifyKernel, MissingMetricsAreUnknown) {
  KernelProfile k;
  k.name = "x";
  k.duration_us = 100;
  EXPECT_EQ(ClassifyKernel(k).state, kUnknown);
}

TEST(ClassifyProgram, TheKernelWithMostTotalTimeDecides) {
  KernelProfile many = Kernel("elementwise", 8, 85, 10);
  many.launches = 100;  // 800 us in all
  KernelProfile one = Kernel("gemm", 500, 30, 90);
  auto c = ClassifyProgram({one, many});
  EXPECT_EQ(c.state, kMemoryBound);
  EXPECT_EQ(c.primary.rfind("elementwise", 0), 0u) << c.primary;
  EXPECT_EQ(ClassifyProgram({}).state, kUnknown);
}

TEST(SummarizeProfiles, ListsLongestFirstAndCapsTheCount) {
  KernelProfile a = Kernel("a", 10, 90, 5);
  a.top_stalls = {{"long_scoreboard", 61.0}, {"wait", 20.0}};
  KernelProfile b = Kernel("b", 50, 20, 80);
  std::string s = SummarizeProfiles({a, b}, 1);
  EXPECT_EQ(s.find("kernel b"), 0u) << s;
  EXPECT_EQ(s.find("kernel a"), std::string::npos);
  EXPECT_NE(s.find("1 more kernels not shown"), std::string::npos);
  std::string all = SummarizeProfiles({a, b});
  EXPECT_NE(all.find("stall long_scoreboard: 61.0%"), std::string::npos) << all;
}

}  // namespace
}  // namespace kforge::kb
