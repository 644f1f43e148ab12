#include "eval/sample_stats.h"

#include <gtest/gtest.h>

#include <cmath>

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

}  // namespace
}  // namespace kforge
