#include "search/pacevolve/crossover_policy.h"

#include <gtest/gtest.h>

#include "search/contrastive/chi_square_test_util.h"

namespace kforge::search::pacevolve {
namespace {

TEST(CrossoverPolicyTest, WeightsByHand) {
  // A = [0.2, 0.5, 0.3], i = 0: A_best = 0.5 (j = 1), S = 1 − 0.3 = 0.7,
  // w_BT = max(0, −0.3) + 0.7·0.8·0.5 = 0.28,
  // w_C1 = 0.3 + 0.7·0.2·0.5 = 0.37, w_C2 = 0.1; total 0.75.
  const ActionWeights w = ComputeActionWeights(0, {0.2, 0.5, 0.3});
  EXPECT_EQ(w.best_partner, 1);
  EXPECT_DOUBLE_EQ(w.a_i, 0.2);
  EXPECT_DOUBLE_EQ(w.a_best, 0.5);
  EXPECT_NEAR(w.similarity, 0.7, 1e-15);
  EXPECT_NEAR(w.backtrack, 0.28, 1e-15);
  ASSERT_EQ(w.crossover.size(), 3u);
  EXPECT_DOUBLE_EQ(w.crossover[0], 0.0);
  EXPECT_NEAR(w.crossover[1], 0.37, 1e-15);
  EXPECT_NEAR(w.crossover[2], 0.1, 1e-15);
  EXPECT_NEAR(w.Total(), 0.75, 1e-15);
  EXPECT_NEAR(w.BacktrackProbability(), 0.28 / 0.75, 1e-15);
  EXPECT_NEAR(w.CrossoverProbability(1), 0.37 / 0.75, 1e-15);
  EXPECT_NEAR(w.CrossoverProbability(2), 0.1 / 0.75, 1e-15);
  EXPECT_DOUBLE_EQ(w.CrossoverProbability(0), 0.0);
}

TEST(CrossoverPolicyTest, DominantIslandPrefersBacktracking) {
  // A = [0.8, 0.3], i = 0: S = 0.5, w_BT = 0.5 + 0.5·0.2·0.7 = 0.57,
  // w_C1 = max(0, −0.5) + 0.5·0.8·0.3 = 0.12.
  const ActionWeights w = ComputeActionWeights(0, {0.8, 0.3});
  EXPECT_NEAR(w.backtrack, 0.57, 1e-15);
  EXPECT_NEAR(w.crossover[1], 0.12, 1e-15);
  EXPECT_GT(w.BacktrackProbability(), 0.8);
}

TEST(CrossoverPolicyTest, SharedLowProgressBacktracksSharedHighProgressCrosses) {
  // Both at 0.1: S = 1, w_BT = 0.81, w_C1 = 0.01.
  const ActionWeights low = ComputeActionWeights(1, {0.1, 0.1});
  EXPECT_NEAR(low.backtrack, 0.81, 1e-15);
  EXPECT_NEAR(low.crossover[0], 0.01, 1e-15);
  // Both at 0.9: w_BT = 0.01, w_C0 = 0.81.
  const ActionWeights high = ComputeActionWeights(1, {0.9, 0.9});
  EXPECT_NEAR(high.backtrack, 0.01, 1e-15);
  EXPECT_NEAR(high.crossover[0], 0.81, 1e-15);
}

TEST(CrossoverPolicyTest, LaggingIslandCrossesToTheLeader) {
  // A_i = 0, A_best = 1: S = 0, w_BT = 0, only crossover to the leader.
  const ActionWeights w = ComputeActionWeights(0, {0.0, 1.0});
  EXPECT_DOUBLE_EQ(w.backtrack, 0.0);
  EXPECT_DOUBLE_EQ(w.crossover[1], 1.0);
  Rng rng(1);
  const Intervention choice = SampleIntervention(w, rng);
  EXPECT_EQ(choice.kind, Intervention::Kind::kCrossover);
  EXPECT_EQ(choice.partner, 1);
  EXPECT_DOUBLE_EQ(choice.probability, 1.0);
}

TEST(CrossoverPolicyTest, TiedLeadersGiveTheBonusToTheFirst) {
  // A = [0.1, 0.4, 0.4], i = 0: j_best = 1, S = 0.7,
  // w_C1 = 0.3 + 0.7·0.1·0.4 = 0.328, w_C2 = 0.3.
  const ActionWeights w = ComputeActionWeights(0, {0.1, 0.4, 0.4});
  EXPECT_EQ(w.best_partner, 1);
  EXPECT_NEAR(w.crossover[1], 0.328, 1e-15);
  EXPECT_NEAR(w.crossover[2], 0.3, 1e-15);
}

TEST(CrossoverPolicyTest, SingleIslandAlwaysBacktracks) {
  const ActionWeights w = ComputeActionWeights(0, {0.4});
  EXPECT_EQ(w.best_partner, -1);
  EXPECT_DOUBLE_EQ(w.backtrack, 1.0);
  Rng rng(3);
  EXPECT_EQ(SampleIntervention(w, rng).kind, Intervention::Kind::kBacktrack);
}

TEST(CrossoverPolicyTest, AllZeroWeightsFallBackToBacktracking) {
  ActionWeights w;
  w.crossover = {0.0, 0.0};
  Rng rng(4);
  const Intervention choice = SampleIntervention(w, rng);
  EXPECT_EQ(choice.kind, Intervention::Kind::kBacktrack);
  EXPECT_DOUBLE_EQ(w.BacktrackProbability(), 1.0);
}

TEST(CrossoverPolicyTest, SamplingFollowsTheWeights) {
  const ActionWeights w = ComputeActionWeights(0, {0.2, 0.5, 0.3});
  Rng rng(8080);
  std::vector<int64_t> counts(3, 0);  // backtrack, crossover 1, crossover 2
  for (int i = 0; i < 30000; ++i) {
    const Intervention c = SampleIntervention(w, rng);
    ++counts[c.kind == Intervention::Kind::kBacktrack ? 0 : c.partner];
    ASSERT_NE(c.partner, 0);
  }
  const std::vector<double> p = {0.28 / 0.75, 0.37 / 0.75, 0.1 / 0.75};
  const double stat = testing::ChiSquareStatistic(counts, p);
  EXPECT_GE(testing::ChiSquareSurvival(stat, 2), testing::kChiSquareAlpha) << stat;
}

}  // namespace
}  // namespace kforge::search::pacevolve
