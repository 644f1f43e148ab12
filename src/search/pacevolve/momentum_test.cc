#include "search/pacevolve/momentum.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "search/contrastive/chi_square_test_util.h"

namespace kforge::search::pacevolve {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

TEST(MomentumFormulaTest, GapIsScoreMinusTarget) {
  EXPECT_DOUBLE_EQ(PerformanceGap(1.25, 0.25), 1.0);
  EXPECT_DOUBLE_EQ(PerformanceGap(0.5, 0.0), 0.5);
}

TEST(MomentumFormulaTest, RelativeProgressByHand) {
  // s_{t-1} = 10, s_t = 8, r = 2: (10 − 8) / (10 − 2) = 0.25.
  EXPECT_DOUBLE_EQ(RelativeProgress(10.0, 8.0, 2.0), 0.25);
  // s_{t-1} = 1.2 ms, s_t = 0.9 ms, r = 0.3 ms: 0.3 / 0.9 = 1/3.
  EXPECT_NEAR(RelativeProgress(1.2, 0.9, 0.3), 1.0 / 3.0, 1e-15);
  // No improvement: R = 0.
  EXPECT_DOUBLE_EQ(RelativeProgress(8.0, 8.0, 2.0), 0.0);
  EXPECT_DOUBLE_EQ(RelativeProgress(8.0, 9.0, 2.0), 0.0);
  EXPECT_DOUBLE_EQ(RelativeProgress(8.0, kInf, 2.0), 0.0);
  EXPECT_DOUBLE_EQ(RelativeProgress(8.0, std::nan(""), 2.0), 0.0);
  // Guards for a wrong floor: below r clamps to 1; at or below r any gain is 1.
  EXPECT_DOUBLE_EQ(RelativeProgress(3.0, 1.0, 2.0), 1.0);
  EXPECT_DOUBLE_EQ(RelativeProgress(2.0, 1.5, 2.0), 1.0);
}

TEST(MomentumFormulaTest, AbsoluteProgressByHand) {
  // s_0 = 10, s_t = 6, r = 2: (10 − 6) / (10 − 2) = 0.5.
  EXPECT_DOUBLE_EQ(AbsoluteProgress(10.0, 6.0, 2.0), 0.5);
  EXPECT_DOUBLE_EQ(AbsoluteProgress(10.0, 10.0, 2.0), 0.0);
  EXPECT_DOUBLE_EQ(AbsoluteProgress(10.0, 2.0, 2.0), 1.0);
  EXPECT_DOUBLE_EQ(AbsoluteProgress(10.0, 1.0, 2.0), 1.0);   // clamped
  EXPECT_DOUBLE_EQ(AbsoluteProgress(10.0, 12.0, 2.0), 0.0);  // clamped
  EXPECT_DOUBLE_EQ(AbsoluteProgress(2.0, 1.0, 2.0), 0.0);    // no gap to close
  EXPECT_DOUBLE_EQ(AbsoluteProgress(10.0, kInf, 2.0), 0.0);
}

TEST(MomentumTrackerTest, EwmaSequenceByHand) {
  // β = 0.9, r = 2, s_0 = 10, m_0 = 1.
  MomentumTracker t(0.9, 2.0, 10.0);
  EXPECT_DOUBLE_EQ(t.momentum(), 1.0);

  MomentumTracker::Step s = t.Observe(8.0);  // R = 0.25
  EXPECT_TRUE(s.improved);
  EXPECT_DOUBLE_EQ(s.relative_progress, 0.25);
  EXPECT_DOUBLE_EQ(s.gap, 6.0);
  EXPECT_NEAR(s.momentum, 0.9 * 1.0 + 0.1 * 0.25, 1e-15);  // 0.925

  s = t.Observe(9.0);  // worse: R = 0, best stays 8
  EXPECT_FALSE(s.improved);
  EXPECT_DOUBLE_EQ(s.best, 8.0);
  EXPECT_NEAR(s.momentum, 0.8325, 1e-15);

  s = t.Observe(kInf);  // a rejected candidate
  EXPECT_NEAR(s.momentum, 0.74925, 1e-15);

  s = t.Observe(5.0);  // R = (8 − 5) / (8 − 2) = 0.5
  EXPECT_DOUBLE_EQ(s.relative_progress, 0.5);
  EXPECT_NEAR(s.momentum, 0.9 * 0.74925 + 0.1 * 0.5, 1e-15);  // 0.724325
  EXPECT_DOUBLE_EQ(t.best(), 5.0);
  EXPECT_DOUBLE_EQ(s.gap, 3.0);
}

TEST(MomentumTrackerTest, StagnationAfterTheExpectedNumberOfFlatSteps) {
  // Without progress m_n = β^n; with β = 0.9 and ε = 0.05 the first n with
  // 0.9^n < 0.05 is 29 (0.9^28 ≈ 0.0523, 0.9^29 ≈ 0.0471).
  MomentumTracker t(0.9, 0.0, 1.0);
  int n = 0;
  while (!t.Stagnant(0.05)) {
    t.Observe(2.0);
    ++n;
  }
  EXPECT_EQ(n, 29);
  EXPECT_NEAR(t.momentum(), std::pow(0.9, 29), 1e-12);
}

TEST(MomentumTrackerTest, RestartResetsMomentumAndBest) {
  MomentumTracker t(0.5, 1.0, 4.0);
  t.Observe(5.0);
  t.Observe(5.0);
  EXPECT_DOUBLE_EQ(t.momentum(), 0.25);
  t.Restart(3.0);
  EXPECT_DOUBLE_EQ(t.momentum(), 1.0);
  EXPECT_DOUBLE_EQ(t.best(), 3.0);
  // R is now measured against the restored best: (3 − 2) / (3 − 1) = 0.5.
  EXPECT_DOUBLE_EQ(t.Observe(2.0).relative_progress, 0.5);
}

TEST(MomentumTrackerTest, JsonRoundTrip) {
  MomentumTracker t(0.8, 0.1, 2.0);
  t.Observe(1.5);
  Result<MomentumTracker> back = MomentumTracker::FromJson(t.ToJson());
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->ToJson(), t.ToJson());
  EXPECT_FALSE(MomentumTracker::FromJson(nlohmann::json::object()).ok());
}

TEST(BacktrackDistributionTest, PowerLawByHand) {
  // α = 1.5, three states: weights 1, 2^-1.5, 3^-1.5, normalised.
  const std::vector<double> p = BacktrackDistribution(3, 1.5);
  ASSERT_EQ(p.size(), 3u);
  EXPECT_NEAR(p[0], 0.6468290742728326, 1e-12);
  EXPECT_NEAR(p[1], 0.22868861234346852, 1e-12);
  EXPECT_NEAR(p[2], 0.1244823133836988, 1e-12);
  // α = 0 is uniform; one state is certain.
  for (double x : BacktrackDistribution(4, 0.0)) EXPECT_DOUBLE_EQ(x, 0.25);
  EXPECT_EQ(BacktrackDistribution(1, 1.5), std::vector<double>{1.0});
  // Earlier states are always likelier.
  const std::vector<double> q = BacktrackDistribution(20, 1.5);
  for (size_t k = 1; k < q.size(); ++k) EXPECT_LT(q[k], q[k - 1]);
}

TEST(BacktrackDistributionTest, SamplerFollowsThePowerLaw) {
  const size_t n = 6;
  const double alpha = 1.5;
  Rng rng(31337);
  std::vector<int64_t> counts(n, 0);
  for (int i = 0; i < 30000; ++i) ++counts[SampleBacktrackState(n, alpha, rng)];
  const std::vector<double> p = BacktrackDistribution(n, alpha);
  const double stat = testing::ChiSquareStatistic(counts, p);
  EXPECT_GE(testing::ChiSquareSurvival(stat, n - 1), testing::kChiSquareAlpha) << stat;
  // Power: the same counts are far from uniform.
  const std::vector<double> uniform(n, 1.0 / n);
  EXPECT_LT(testing::ChiSquareSurvival(testing::ChiSquareStatistic(counts, uniform), n - 1), 1e-6);
}

}  // namespace
}  // namespace kforge::search::pacevolve
