#include "eval/sample_stats.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace kforge {
namespace {

TEST(SampleStatsTest, SummaryOfKnownSamples) {
  SampleSummary s = Summarize({5, 1, 4, 2, 3});
  EXPECT_EQ(s.samples, 5);
  EXPECT_DOUBLE_EQ(s.median, 3);
  EXPECT_DOUBLE_EQ(s.mean, 3);
  EXPECT_DOUBLE_EQ(s.p10, 1.4);  // linear interpolation between 1 and 2
  EXPECT_DOUBLE_EQ(s.p90, 4.6);
  EXPECT_NEAR(s.stddev, std::sqrt(2.5), 1e-12);
  EXPECT_NEAR(s.rel_stddev, std::sqrt(2.5) / 3, 1e-12);
}

TEST(SampleStatsTest, EmptyAndSingle) {
  EXPECT_EQ(Summarize({}).samples, 0);
  SampleSummary one = Summarize({2.5});
  EXPECT_DOUBLE_EQ(one.median, 2.5);
  EXPECT_DOUBLE_EQ(one.stddev, 0);
  EXPECT_TRUE(std::isinf(RelativeMedianError({1.0})));
}

TEST(SampleStatsTest, MedianErrorShrinksWithMoreSamples) {
  std::vector<double> few = {1.0, 1.1, 0.9, 1.05, 0.95};
  std::vector<double> many;
  for (int i = 0; i < 20; ++i) many.insert(many.end(), few.begin(), few.end());
  // Same median (1.0) and MAD (0.05): the error falls with √n alone.
  EXPECT_NEAR(RelativeMedianError(few), 1.2533 * 1.4826 * 0.05 / std::sqrt(5.0), 1e-9);
  EXPECT_NEAR(RelativeMedianError(few) / RelativeMedianError(many), std::sqrt(20.0), 1e-9);
}

TEST(SampleStatsTest, MedianErrorIgnoresRareOutliers) {
  // 1% of samples 50× slow: σ grows about fivefold, the median's error not.
  std::vector<double> clean, spiky;
  for (int i = 0; i < 1000; ++i) clean.push_back(1.0 + 0.01 * ((i % 21) - 10) / 10.0);
  spiky = clean;
  for (int i = 0; i < 1000; i += 100) spiky[i] = 50.0;
  EXPECT_GT(Summarize(spiky).stddev, 100 * Summarize(clean).stddev);
  EXPECT_LT(RelativeMedianError(spiky), 1.1 * RelativeMedianError(clean));
}

TEST(SampleStatsTest, MedianErrorFallsBackToSigmaWhenMostSamplesAreEqual) {
  std::vector<double> flat(10, 2.0);
  flat.push_back(2.2);
  flat.push_back(1.8);
  SampleSummary s = Summarize(flat);
  EXPECT_NEAR(RelativeMedianError(flat), 1.2533 * s.stddev / std::sqrt(12.0) / 2.0, 1e-12);
}

TEST(SampleStatsTest, BatchedErrorSeesBatchesThatDiffer) {
  // Ten batches of five: tight within a batch, but every other batch 10%
  // slower (one buffer placement fast, the next slow). The per-sample error
  // treats 50 samples as independent and calls the median well known; the
  // batch medians show it is not.
  std::vector<double> samples;
  for (int b = 0; b < 10; ++b) {
    for (int i = 0; i < 5; ++i) samples.push_back((b % 2 ? 1.1 : 1.0) + 0.001 * i);
  }
  double per_sample = RelativeMedianError(samples);
  double batched = BatchedMedianError(samples, 5);
  EXPECT_GT(batched, 1.5 * per_sample);
  EXPECT_GT(batched, 0.01);
  // Batch size one is the per-sample rule; too few batches say nothing.
  EXPECT_DOUBLE_EQ(BatchedMedianError(samples, 1), per_sample);
  EXPECT_TRUE(std::isinf(
      BatchedMedianError(std::vector<double>(samples.begin(), samples.begin() + 14), 5)));
}

TEST(SampleStatsTest, BatchedErrorIgnoresAnIncompleteLastBatch) {
  std::vector<double> samples = {1, 1, 2, 2, 3, 3, 9};
  // Batch medians 1, 2, 3 (the lone 9 is not a batch): MAD 1.
  EXPECT_NEAR(BatchedMedianError(samples, 2),
              1.2533 * 1.4826 * 1.0 / std::sqrt(3.0) / Summarize(samples).median, 1e-12);
}

// Batches of `batch` samples around `center`, each batch shifted by one of
// `shifts` in turn (relative), samples within a batch spread by ±1%.
std::vector<double> Batched(double center, const std::vector<double>& shifts, int batches,
                            int batch) {
  std::vector<double> out;
  for (int b = 0; b < batches; ++b) {
    double m = center * (1 + shifts[b % shifts.size()]);
    for (int i = 0; i < batch; ++i) out.push_back(m * (1 + 0.01 * ((i % 3) - 1)));
  }
  return out;
}

TEST(SampleStatsTest, MedianRatioCombinesBothErrors) {
  auto eager = Batched(2.0, {0.0, 0.02, -0.02}, 30, 5);
  auto cand = Batched(1.0, {0.0, 0.04, -0.04}, 30, 5);
  RatioEstimate r = MedianRatio(eager, cand, 5);
  EXPECT_NEAR(r.value, 2.0, 1e-9);
  double a = BatchedMedianError(eager, 5), b = BatchedMedianError(cand, 5);
  EXPECT_GT(a, 0);
  EXPECT_NEAR(r.rel_error, std::sqrt(a * a + b * b), 1e-12);
  EXPECT_GT(r.rel_error, b);
  // Too few batches: the error is unknown, not zero.
  EXPECT_TRUE(std::isinf(MedianRatio(Batched(2, {0}, 2, 5), cand, 5).rel_error));
  EXPECT_TRUE(std::isinf(MedianRatio(eager, {}, 5).rel_error));
}

TEST(SampleStatsTest, RatioIntervalAndThresholds) {
  RatioEstimate r{2.0, 0.01};
  EXPECT_DOUBLE_EQ(r.Lower(3), 1.94);
  EXPECT_DOUBLE_EQ(r.Upper(3), 2.06);
  EXPECT_TRUE(r.ClearOf(1.05, 3));
  EXPECT_TRUE(r.ClearOf(2.1, 3));
  EXPECT_FALSE(r.ClearOf(2.05, 3));  // inside the interval
}

TEST(SampleStatsTest, RacingStopsOnlyClearlySlowerCandidatesWithSettledMilestones) {
  const RatioEstimate best{8.0, 0.01};
  const double z = 3;
  // 5.5× ± 1%: below the best's lower end (7.76) with room, milestone clear.
  RatioEstimate slow{5.5, 0.01};
  EXPECT_TRUE(ClearlyBelowBest(slow, best, z, {{slow, 1.05}}));
  // 7.7× ± 1%: its upper end (7.93) reaches into the best's interval.
  RatioEstimate close{7.7, 0.01};
  EXPECT_FALSE(ClearlyBelowBest(close, best, z, {{close, 1.05}}));
  // Faster than the best: never stopped by the race.
  RatioEstimate fast{9.0, 0.001};
  EXPECT_FALSE(ClearlyBelowBest(fast, best, z, {}));
  // Clearly slower, but its speedup over compile straddles the milestone
  // margin: the reward depends on more samples, so timing goes on.
  RatioEstimate over_compile{1.04, 0.01};
  EXPECT_FALSE(ClearlyBelowBest(slow, best, z, {{slow, 1.05}, {over_compile, 1.05}}));
  EXPECT_TRUE(ClearlyBelowBest(slow, best, z, {{slow, 1.05}, {RatioEstimate{0.7, 0.01}, 1.05}}));
  // Errors not known yet, or racing switched off.
  RatioEstimate unknown{5.5, std::numeric_limits<double>::infinity()};
  EXPECT_FALSE(ClearlyBelowBest(unknown, best, z, {}));
  EXPECT_FALSE(ClearlyBelowBest(slow, RatioEstimate{8.0, unknown.rel_error}, z, {}));
  EXPECT_FALSE(ClearlyBelowBest(slow, best, 0, {}));
}

}  // namespace
}  // namespace kforge
