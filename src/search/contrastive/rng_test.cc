#include "search/contrastive/rng.h"

#include <gtest/gtest.h>

#include "search/contrastive/chi_square_test_util.h"

namespace kforge::search {
namespace {

TEST(RngTest, SameSeedSameDraws) {
  Rng a(42), b(42), c(43);
  bool any_difference = false;
  for (int i = 0; i < 100; ++i) {
    const uint64_t x = a.NextU64();
    EXPECT_EQ(x, b.NextU64());
    any_difference |= (x != c.NextU64());
  }
  EXPECT_TRUE(any_difference);
}

TEST(RngTest, SavedStateResumesTheSameSequence) {
  Rng a(7);
  for (int i = 0; i < 10; ++i) a.Uniform();
  const std::string state = a.SaveState();
  Rng b(999);
  ASSERT_TRUE(b.RestoreState(state).ok());
  for (int i = 0; i < 20; ++i) EXPECT_EQ(a.NextU64(), b.NextU64());
  EXPECT_FALSE(b.RestoreState("not a state").ok());
}

TEST(RngTest, UniformAndIndexStayInRange) {
  Rng r(1);
  for (int i = 0; i < 10000; ++i) {
    const double u = r.Uniform();
    ASSERT_GE(u, 0.0);
    ASSERT_LT(u, 1.0);
    ASSERT_LT(r.UniformIndex(7), 7u);
  }
}

TEST(RngTest, CategoricalNeverPicksZeroWeightAndFitsTheWeights) {
  Rng r(2024);
  const std::vector<double> w = {0.0, 1.0, 3.0, 0.0, 6.0};
  std::vector<int64_t> counts(w.size(), 0);
  const int draws = 50000;
  for (int i = 0; i < draws; ++i) ++counts[r.Categorical(w)];
  EXPECT_EQ(counts[0], 0);
  EXPECT_EQ(counts[3], 0);
  const std::vector<double> p = {0.0, 0.1, 0.3, 0.0, 0.6};
  const double stat = testing::ChiSquareStatistic(counts, p);
  EXPECT_GE(testing::ChiSquareSurvival(stat, 2), testing::kChiSquareAlpha) << stat;
}

TEST(ChiSquareUtilTest, SurvivalMatchesTableValues) {
  // Upper 0.1 % points of the chi-square distribution (standard tables).
  EXPECT_NEAR(testing::ChiSquareSurvival(13.816, 2), 0.001, 2e-6);
  EXPECT_NEAR(testing::ChiSquareSurvival(18.467, 4), 0.001, 2e-6);
  EXPECT_NEAR(testing::ChiSquareSurvival(20.515, 5), 0.001, 2e-6);
  EXPECT_NEAR(testing::ChiSquareSurvival(31.264, 11), 0.001, 2e-6);
  // Closed forms: df = 2 gives e^{-x/2}; df = 4 gives e^{-x/2}(1 + x/2).
  EXPECT_NEAR(testing::ChiSquareSurvival(3.0, 2), std::exp(-1.5), 1e-12);
  EXPECT_NEAR(testing::ChiSquareSurvival(1.0, 4), std::exp(-0.5) * 1.5, 1e-12);
  EXPECT_DOUBLE_EQ(testing::ChiSquareSurvival(0.0, 3), 1.0);
}

}  // namespace
}  // namespace kforge::search
