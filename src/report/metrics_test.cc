// Metric definitions checked against hand-computed suites (docs/report.md).
#include "report/metrics.h"

#include <gtest/gtest.h>

#include <cmath>

namespace kforge::report {
namespace {

TaskOutcome Outcome(const std::string& task, bool accepted, const std::string& verdict,
                    std::optional<double> eager, std::optional<double> compile) {
  TaskOutcome o;
  o.task = task;
  o.accepted = accepted;
  o.verdict = verdict;
  o.speedup_eager = eager;
  o.speedup_compile = compile;
  return o;
}

// Six tasks, worked by hand in the comments:
//   t1 ok 2.0/1.2, t2 ok 0.5/0.4, t3 ok 1.0/0.9 (exactly 1: not faster),
//   t4 not accepted, t5 degenerate (its 10x must count nowhere), t6 suspect 4.0/3.0.
std::vector<TaskOutcome> HandSuite() {
  std::vector<TaskOutcome> s = {
      Outcome("t1", true, "ok", 2.0, 1.2),   Outcome("t2", true, "ok", 0.5, 0.4),
      Outcome("t3", true, "ok", 1.0, 0.9),   Outcome("t4", false, "", std::nullopt, std::nullopt),
      Outcome("t5", true, "ok", 10.0, 10.0), Outcome("t6", true, "suspect", 4.0, 3.0),
  };
  s[4].degenerate = true;
  s[4].degenerate_reason = "output does not depend on the input";
  for (size_t i = 0; i < s.size(); ++i) {
    s[i].input_tokens = 100 * static_cast<int64_t>(i + 1);  // 100..600: 2100 in all
    s[i].output_tokens = 10;                                // 60 in all
    s[i].cost_usd = 0.5;                                    // 3.0 in all
  }
  return s;
}

TEST(SuiteMetrics, HandComputedSuiteWithoutSuspect) {
  SuiteMetrics m = ComputeSuiteMetrics(HandSuite(), {});
  EXPECT_EQ(m.tasks_total, 6);
  EXPECT_EQ(m.tasks, 5);  // t5 is degenerate
  EXPECT_EQ(m.degenerate_tasks, 1);
  ASSERT_EQ(m.degenerate.size(), 1u);
  EXPECT_EQ(m.degenerate[0], "t5");
  EXPECT_EQ(m.accepted_tasks, 3);  // t1 t2 t3; t6 is suspect
  EXPECT_EQ(m.suspect_tasks, 1);
  ASSERT_TRUE(m.pass_rate);
  EXPECT_DOUBLE_EQ(*m.pass_rate, 3.0 / 5);

  // Eager speedups of the successes: 2.0, 0.5, 1.0, over n = 5.
  const double eager_fast[] = {3.0 / 5, 2.0 / 5, 2.0 / 5, 1.0 / 5, 1.0 / 5, 0.0};
  // Compile: 1.2, 0.4, 0.9.
  const double compile_fast[] = {3.0 / 5, 2.0 / 5, 2.0 / 5, 1.0 / 5, 0.0, 0.0};
  for (size_t i = 0; i < kFastPThresholds.size(); ++i) {
    ASSERT_TRUE(m.eager.fast_p[i]) << i;
    EXPECT_DOUBLE_EQ(*m.eager.fast_p[i], eager_fast[i]) << "p=" << kFastPThresholds[i];
    ASSERT_TRUE(m.compile.fast_p[i]) << i;
    EXPECT_DOUBLE_EQ(*m.compile.fast_p[i], compile_fast[i]) << "p=" << kFastPThresholds[i];
  }
  EXPECT_DOUBLE_EQ(*m.eager.faster_rate, 0.2);
  EXPECT_DOUBLE_EQ(*m.compile.faster_rate, 0.2);

  EXPECT_NEAR(*m.eager.stats.geomean, 1.0, 1e-12);  // (2 * 0.5 * 1)^(1/3)
  EXPECT_NEAR(*m.compile.stats.geomean, std::cbrt(1.2 * 0.4 * 0.9), 1e-12);
  EXPECT_EQ(m.eager.stats.count, 3);
  EXPECT_NEAR(*m.eager.stats.mean, 3.5 / 3, 1e-12);
  EXPECT_DOUBLE_EQ(*m.eager.stats.median, 1.0);
  EXPECT_DOUBLE_EQ(*m.eager.stats.p25, 0.75);  // halfway between 0.5 and 1.0
  EXPECT_DOUBLE_EQ(*m.eager.stats.p75, 1.5);   // halfway between 1.0 and 2.0
  EXPECT_DOUBLE_EQ(*m.eager.stats.max, 2.0);
  EXPECT_DOUBLE_EQ(*m.eager.stats.min, 0.5);

  // Tokens and cost count every task, the degenerate one included.
  EXPECT_EQ(m.input_tokens, 2100);
  EXPECT_EQ(m.output_tokens, 60);
  EXPECT_EQ(m.tokens(), 2160);
  EXPECT_DOUBLE_EQ(m.cost_usd, 3.0);
  EXPECT_DOUBLE_EQ(*m.tokens_per_task, 360.0);
  EXPECT_DOUBLE_EQ(*m.cost_usd_per_task, 0.5);
}

TEST(SuiteMetrics, SuspectCountsOnlyWhenAsked) {
  SuiteMetrics m = ComputeSuiteMetrics(HandSuite(), {.include_suspect = true});
  EXPECT_TRUE(m.include_suspect);
  EXPECT_EQ(m.tasks, 5);
  EXPECT_EQ(m.accepted_tasks, 4);
  EXPECT_DOUBLE_EQ(*m.pass_rate, 4.0 / 5);
  // Eager: 2.0, 0.5, 1.0, 4.0.
  const double eager_fast[] = {4.0 / 5, 3.0 / 5, 3.0 / 5, 2.0 / 5, 2.0 / 5, 1.0 / 5};
  for (size_t i = 0; i < kFastPThresholds.size(); ++i) {
    EXPECT_DOUBLE_EQ(*m.eager.fast_p[i], eager_fast[i]) << "p=" << kFastPThresholds[i];
  }
  EXPECT_NEAR(*m.eager.stats.geomean, std::sqrt(2.0), 1e-12);  // (2*0.5*1*4)^(1/4)
  EXPECT_DOUBLE_EQ(*m.eager.stats.max, 4.0);
}

TEST(SuiteMetrics, DegenerateTaskChangesNoRate) {
  std::vector<TaskOutcome> with = HandSuite();
  std::vector<TaskOutcome> without = with;
  without.erase(without.begin() + 4);  // drop t5
  SuiteMetrics a = ComputeSuiteMetrics(with, {});
  SuiteMetrics b = ComputeSuiteMetrics(without, {});
  EXPECT_EQ(a.tasks, b.tasks);
  EXPECT_EQ(*a.pass_rate, *b.pass_rate);
  for (size_t i = 0; i < kFastPThresholds.size(); ++i) {
    EXPECT_EQ(*a.eager.fast_p[i], *b.eager.fast_p[i]);
    EXPECT_EQ(*a.compile.fast_p[i], *b.compile.fast_p[i]);
  }
  EXPECT_EQ(*a.eager.stats.geomean, *b.eager.stats.geomean);
  EXPECT_EQ(a.eager.stats.max, b.eager.stats.max);
  EXPECT_EQ(b.degenerate_tasks, 0);
}

TEST(SuiteMetrics, MissingCompileBaselineLeavesCompileRatesUnknown) {
  std::vector<TaskOutcome> s = {Outcome("a", true, "ok", 1.5, std::nullopt),
                                Outcome("b", false, "", std::nullopt, std::nullopt)};
  SuiteMetrics m = ComputeSuiteMetrics(s, {});
  EXPECT_DOUBLE_EQ(*m.eager.fast_p[0], 0.5);
  EXPECT_DOUBLE_EQ(*m.eager.faster_rate, 0.5);
  for (const auto& f : m.compile.fast_p) EXPECT_FALSE(f.has_value());
  EXPECT_FALSE(m.compile.faster_rate);
  EXPECT_FALSE(m.compile.stats.geomean);
  EXPECT_EQ(m.compile.stats.count, 0);
}

TEST(SuiteMetrics, EmptyAndAllDegenerateSuitesHaveNoRates) {
  SuiteMetrics empty = ComputeSuiteMetrics({}, {});
  EXPECT_EQ(empty.tasks, 0);
  EXPECT_FALSE(empty.pass_rate);
  EXPECT_FALSE(empty.eager.fast_p[0]);
  EXPECT_FALSE(empty.tokens_per_task);

  std::vector<TaskOutcome> s = {Outcome("d", false, "", std::nullopt, std::nullopt)};
  s[0].degenerate = true;
  SuiteMetrics all_degenerate = ComputeSuiteMetrics(s, {});
  EXPECT_EQ(all_degenerate.tasks_total, 1);
  EXPECT_EQ(all_degenerate.tasks, 0);
  EXPECT_FALSE(all_degenerate.pass_rate);
  EXPECT_TRUE(all_degenerate.tokens_per_task);
}

TEST(SuiteMetrics, FastPAtAnyThreshold) {
  auto s = HandSuite();
  EXPECT_DOUBLE_EQ(*FastP(s, Baseline::kEager, 1.99, {}), 0.2);
  EXPECT_DOUBLE_EQ(*FastP(s, Baseline::kEager, 0.49, {}), 0.6);
  EXPECT_DOUBLE_EQ(*FastP(s, Baseline::kEager, 3.0, {.include_suspect = true}), 0.2);
}

TEST(SpeedupStats, PercentilesInterpolateLinearly) {
  SpeedupStats s = DescribeSpeedups({4, 1, 3, 2});
  EXPECT_EQ(s.count, 4);
  EXPECT_DOUBLE_EQ(*s.p25, 1.75);
  EXPECT_DOUBLE_EQ(*s.median, 2.5);
  EXPECT_DOUBLE_EQ(*s.p75, 3.25);
  EXPECT_DOUBLE_EQ(*s.mean, 2.5);
  EXPECT_NEAR(*s.geomean, std::pow(24.0, 0.25), 1e-12);
  SpeedupStats one = DescribeSpeedups({1.7});
  EXPECT_DOUBLE_EQ(*one.p25, 1.7);
  EXPECT_DOUBLE_EQ(*one.p75, 1.7);
  SpeedupStats none = DescribeSpeedups({});
  EXPECT_EQ(none.count, 0);
  EXPECT_FALSE(none.median);
  // Zero, negative and non-finite ratios are not speedups.
  SpeedupStats cleaned = DescribeSpeedups({0, -1, std::nan(""), 2});
  EXPECT_EQ(cleaned.count, 1);
}

TEST(SuiteMetricsJson, HasTheContractShape) {
  nlohmann::json j = SuiteMetricsJson(ComputeSuiteMetrics(HandSuite(), {}));
  EXPECT_EQ(j["tasks"], 5);
  EXPECT_DOUBLE_EQ(j["pass_rate"].get<double>(), 0.6);
  for (const char* b : {"eager", "compile"}) {
    for (const char* p : {"0", "0.5", "0.8", "1", "1.5", "2"}) {
      EXPECT_TRUE(j["fast_p"][b].contains(p)) << b << " " << p;
    }
    EXPECT_TRUE(j["geomean_speedup"].contains(b));
    EXPECT_TRUE(j["faster_rate"].contains(b));
  }
  EXPECT_DOUBLE_EQ(j["fast_p"]["eager"]["0.5"].get<double>(), 0.4);
  EXPECT_DOUBLE_EQ(j["cost_usd"].get<double>(), 3.0);
  EXPECT_EQ(j["tokens"], 2160);
  EXPECT_EQ(j["degenerate"], nlohmann::json::array({"t5"}));
  EXPECT_EQ(ThresholdKey(0.8), "0.8");
  EXPECT_EQ(ThresholdKey(2), "2");
}

}  // namespace
}  // namespace kforge::report
