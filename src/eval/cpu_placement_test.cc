#include "eval/cpu_placement.h"

#include <gtest/gtest.h>
#include <sched.h>

#include <fstream>

namespace kforge {
namespace {

std::filesystem::path Scratch(const std::string& name) {
  auto d = std::filesystem::temp_directory_path() / ("kforge-cpu-placement-test-" + name);
  std::filesystem::remove_all(d);
  std::filesystem::create_directories(d);
  return d;
}

TEST(ParseCpuList, RangesAndSingles) {
  EXPECT_EQ(ParseCpuList("0-3,8,10-11\n"), (std::set<int>{0, 1, 2, 3, 8, 10, 11}));
  EXPECT_EQ(ParseCpuList("5"), (std::set<int>{5}));
}

TEST(ParseCpuList, RejectsMalformed) {
  EXPECT_FALSE(ParseCpuList(""));
  EXPECT_FALSE(ParseCpuList("a-b"));
  EXPECT_FALSE(ParseCpuList("3-1"));
  EXPECT_FALSE(ParseCpuList("1,,2"));
  EXPECT_FALSE(ParseCpuList("1x"));
}

TEST(ReadGpuLocalCpus, ReadsTheSlotsFile) {
  auto root = Scratch("sysfs");
  auto dir = root / "bus" / "pci" / "devices" / "0000:00:06.0";
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "local_cpulist") << "8-15\n";
  EXPECT_EQ(ReadGpuLocalCpus(root, "0000:00:06.0"), (std::set<int>{8, 9, 10, 11, 12, 13, 14, 15}));
  EXPECT_FALSE(ReadGpuLocalCpus(root, "0000:00:07.0"));
  EXPECT_FALSE(ReadGpuLocalCpus(root, ""));
}

TEST(PlanCpuPlacement, TwoLocalCpusAwayFromCpuZero) {
  auto p = PlanCpuPlacement({0, 1, 2, 3, 4, 5, 6, 7}, {0, 1, 2, 3}, 0);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p.value().harness_cpu, 3);
  EXPECT_EQ(p.value().timer_cpu, 2);
}

TEST(PlanCpuPlacement, TimerLeavesTheLocalSetWhenItHasOneCpu) {
  auto p = PlanCpuPlacement({0, 1, 2, 3}, {2}, 0);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p.value().harness_cpu, 2);
  EXPECT_EQ(p.value().timer_cpu, 3);
}

TEST(PlanCpuPlacement, UnknownLocalityUsesAllowedCpus) {
  auto p = PlanCpuPlacement({0, 1}, {}, 0);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p.value().harness_cpu, 1);
  EXPECT_EQ(p.value().timer_cpu, 0);
  // Local CPUs outside the mask do not count.
  auto q = PlanCpuPlacement({4, 5}, {0, 1}, 0);
  ASSERT_TRUE(q.ok());
  EXPECT_EQ(q.value().harness_cpu, 5);
  EXPECT_EQ(q.value().timer_cpu, 4);
}

TEST(PlanCpuPlacement, EachGpuGetsItsOwnPairWhileCpusLast) {
  std::set<int> all;
  for (int c = 0; c < 16; ++c) all.insert(c);
  std::set<int> used;
  for (int gpu = 0; gpu < 8; ++gpu) {
    auto p = PlanCpuPlacement(all, all, gpu);
    ASSERT_TRUE(p.ok());
    EXPECT_NE(p.value().harness_cpu, p.value().timer_cpu);
    EXPECT_TRUE(used.insert(p.value().harness_cpu).second) << gpu;
    EXPECT_TRUE(used.insert(p.value().timer_cpu).second) << gpu;
  }
  EXPECT_EQ(PlanCpuPlacement(all, all, 1).value().harness_cpu, 13);
  EXPECT_EQ(PlanCpuPlacement(all, all, 7).value().timer_cpu, 0);  // CPU 0 only when needed
  // A ninth GPU wraps around: sharing is then unavoidable.
  EXPECT_EQ(PlanCpuPlacement(all, all, 8).value().harness_cpu, 15);
}

TEST(PlanCpuPlacement, OneCpuIsNoPlacement) {
  EXPECT_FALSE(PlanCpuPlacement({0}, {0}, 0).ok());
}

TEST(ThreadCpuBinding, BindsAndRestores) {
  std::set<int> before = AllowedCpus();
  ASSERT_FALSE(before.empty());
  int cpu = *before.rbegin();
  {
    ThreadCpuBinding bind(cpu);
    ASSERT_TRUE(bind.ok());
    EXPECT_EQ(AllowedCpus(), std::set<int>{cpu});
    EXPECT_EQ(::sched_getcpu(), cpu);
  }
  EXPECT_EQ(AllowedCpus(), before);
}

}  // namespace
}  // namespace kforge
