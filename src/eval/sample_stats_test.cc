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
  // Same median; sample variances S/4 and 20S/99 (n − 1 denominators), so the
  // ratio is √20 · √(99/80).
  EXPECT_NEAR(RelativeMedianError(few) / RelativeMedianError(many),
              std::sqrt(20.0) * std::sqrt(99.0 / 80.0), 1e-9);
}

}  // namespace
}  // namespace kforge
