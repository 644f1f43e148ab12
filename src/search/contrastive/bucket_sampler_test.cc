#include "search/contrastive/bucket_sampler.h"

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <set>

#include "search/contrastive/chi_square_test_util.h"

namespace kforge::search {
namespace {

using testing::ChiSquareStatistic;
using testing::ChiSquareSurvival;
using testing::kChiSquareAlpha;

ScoreBucket BucketWithMean(double mean) {
  ScoreBucket b;
  b.mean_score = mean;
  return b;
}

TEST(BucketSamplerTest, ProbabilitiesMatchEquationOneByHand) {
  // Means 1.0, 1.5, 2.0, τ = 0.5 → μ = 1.5, logits −1, 0, 1:
  // P = (e^-1, 1, e) / (e^-1 + 1 + e) = 0.090031, 0.244728, 0.665241.
  const BucketSampler sampler(0.5);
  const std::vector<double> p =
      sampler.Probabilities({BucketWithMean(1.0), BucketWithMean(1.5), BucketWithMean(2.0)});
  ASSERT_EQ(p.size(), 3u);
  const double z = std::exp(-1.0) + 1.0 + std::exp(1.0);
  EXPECT_NEAR(p[0], std::exp(-1.0) / z, 1e-12);
  EXPECT_NEAR(p[1], 1.0 / z, 1e-12);
  EXPECT_NEAR(p[2], std::exp(1.0) / z, 1e-12);
  EXPECT_NEAR(p[0], 0.090031, 1e-6);
  EXPECT_NEAR(p[2], 0.665241, 1e-6);
  EXPECT_TRUE(sampler.Probabilities({}).empty());
}

TEST(BucketSamplerTest, HugeScoresStayFinite) {
  // A 400x outlier with τ = 0.01 would overflow exp() without centring.
  const BucketSampler sampler(0.01);
  const std::vector<double> p = sampler.Probabilities({BucketWithMean(1.0), BucketWithMean(400.0)});
  EXPECT_DOUBLE_EQ(p[1], 1.0);
  EXPECT_DOUBLE_EQ(p[0], 0.0);
}

// Five buckets of width 1 with speedup means 1.5, 2.5, 3.5, 4.5, 5.5; one
// bucket holds three members to test the uniform draw inside a bucket.
ExemplarStore FiveBucketStore() {
  ExemplarStore store(ScoreKind::kSpeedup, 1.0, 1.0);
  int id = 0;
  auto add = [&](double speedup) {
    const int n = id++;
    EXPECT_TRUE(store.Add("c" + std::to_string(n), 1.0 / speedup, 0, n));
  };
  add(1.5);
  add(2.5);
  add(3.25);  // bucket [3,4): three members with mean 3.5
  add(3.5);
  add(3.75);
  add(4.5);
  add(5.5);
  return store;
}

TEST(BucketSamplerTest, DrawsDistinctBucketsAndCapsAtTheBucketCount) {
  const ExemplarStore store = FiveBucketStore();
  const BucketSampler sampler(1.0);
  Rng rng(3);
  for (int trial = 0; trial < 200; ++trial) {
    const std::vector<size_t> picked = sampler.Sample(store, 3, rng);
    ASSERT_EQ(picked.size(), 3u);
    std::set<int64_t> buckets;
    for (size_t i : picked) buckets.insert(static_cast<int64_t>(store.entries()[i].score));
    EXPECT_EQ(buckets.size(), 3u);
  }
  EXPECT_EQ(sampler.Sample(store, 9, rng).size(), 5u);
  EXPECT_TRUE(sampler.Sample(ExemplarStore(ScoreKind::kSpeedup, 1.0, 1.0), 2, rng).empty());
}

TEST(BucketSamplerTest, FirstDrawFollowsTheSoftmax) {
  const ExemplarStore store = FiveBucketStore();
  const BucketSampler sampler(1.0);
  const std::vector<ScoreBucket> buckets = store.Buckets();
  const std::vector<double> p = sampler.Probabilities(buckets);
  std::map<size_t, size_t> bucket_of;
  for (size_t b = 0; b < buckets.size(); ++b) {
    for (size_t m : buckets[b].members) bucket_of[m] = b;
  }
  Rng rng(20250101);
  std::vector<int64_t> counts(buckets.size(), 0);
  const int draws = 40000;
  for (int i = 0; i < draws; ++i) ++counts[bucket_of.at(sampler.Sample(store, 1, rng)[0])];
  const double stat = ChiSquareStatistic(counts, p);
  // df = 5 buckets − 1.
  EXPECT_GE(ChiSquareSurvival(stat, 4), kChiSquareAlpha) << "chi2 = " << stat;

  // The same data against a uniform bucket choice must be rejected: the test
  // has power to see a sampler that ignores the scores.
  const std::vector<double> uniform(buckets.size(), 1.0 / buckets.size());
  EXPECT_LT(ChiSquareSurvival(ChiSquareStatistic(counts, uniform), 4), 1e-6);
}

TEST(BucketSamplerTest, OrderedPairsFollowSuccessiveSamplingWithoutReplacement) {
  // Four buckets; P(first = a, second = b) = p_a · p_b / (1 − p_a).
  ExemplarStore store(ScoreKind::kSpeedup, 1.0, 1.0);
  const std::vector<double> speedups = {1.5, 2.5, 3.5, 4.5};
  for (size_t i = 0; i < speedups.size(); ++i) {
    ASSERT_TRUE(store.Add("c" + std::to_string(i), 1.0 / speedups[i], 0, 0));
  }
  const BucketSampler sampler(1.5);
  const std::vector<double> p = sampler.Probabilities(store.Buckets());
  std::vector<double> expected;
  for (size_t a = 0; a < 4; ++a) {
    for (size_t b = 0; b < 4; ++b) {
      if (a != b) expected.push_back(p[a] * p[b] / (1.0 - p[a]));
    }
  }
  std::vector<int64_t> counts(expected.size(), 0);
  Rng rng(77);
  const int draws = 60000;
  for (int i = 0; i < draws; ++i) {
    const std::vector<size_t> pair = sampler.Sample(store, 2, rng);
    ASSERT_EQ(pair.size(), 2u);
    const size_t a = pair[0], b = pair[1];
    ASSERT_NE(a, b);
    ++counts[a * 3 + (b < a ? b : b - 1)];
  }
  const double stat = ChiSquareStatistic(counts, expected);
  // df = 12 ordered pairs − 1.
  EXPECT_GE(ChiSquareSurvival(stat, 11), kChiSquareAlpha) << "chi2 = " << stat;
}

TEST(BucketSamplerTest, MembersOfABucketAreEquallyLikely) {
  const ExemplarStore store = FiveBucketStore();
  const BucketSampler sampler(1.0);
  Rng rng(9);
  std::vector<int64_t> counts(3, 0);  // entries 2, 3, 4 share bucket [3, 4)
  int64_t hits = 0;
  while (hits < 30000) {
    const size_t i = sampler.Sample(store, 1, rng)[0];
    if (i >= 2 && i <= 4) {
      ++counts[i - 2];
      ++hits;
    }
  }
  const double stat = ChiSquareStatistic(counts, {1.0 / 3, 1.0 / 3, 1.0 / 3});
  EXPECT_GE(ChiSquareSurvival(stat, 2), kChiSquareAlpha) << "chi2 = " << stat;
}

TEST(BucketSamplerTest, SameSeedSameExemplars) {
  const ExemplarStore store = FiveBucketStore();
  const BucketSampler sampler(0.7);
  Rng a(5), b(5);
  for (int i = 0; i < 50; ++i) EXPECT_EQ(sampler.Sample(store, 2, a), sampler.Sample(store, 2, b));
}

}  // namespace
}  // namespace kforge::search
