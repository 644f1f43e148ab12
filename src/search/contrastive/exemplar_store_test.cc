#include "search/contrastive/exemplar_store.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace kforge::search {
namespace {

TEST(ExemplarStoreTest, SpeedupScoresGoIntoFixedWidthBuckets) {
  // Reference 2.0 ms, Δs = 0.5: runtimes 2.0, 1.0, 0.9, 0.5 ms give speedups
  // 1.0, 2.0, 2.222…, 4.0 → buckets [1.0,1.5), [2.0,2.5) (two members), [4.0,4.5).
  ExemplarStore store(ScoreKind::kSpeedup, 2.0, 0.5);
  ASSERT_TRUE(store.Add("a", 2.0, 0, 1));
  ASSERT_TRUE(store.Add("b", 1.0, 0, 2));
  ASSERT_TRUE(store.Add("c", 0.9, 1, 3));
  ASSERT_TRUE(store.Add("d", 0.5, 1, 4));
  EXPECT_DOUBLE_EQ(store.entries()[1].score, 2.0);

  const std::vector<ScoreBucket> buckets = store.Buckets();
  ASSERT_EQ(buckets.size(), 3u);
  EXPECT_EQ(buckets[0].index, 2);
  EXPECT_DOUBLE_EQ(buckets[0].lower, 1.0);
  EXPECT_DOUBLE_EQ(buckets[0].upper, 1.5);
  EXPECT_DOUBLE_EQ(buckets[0].mean_score, 1.0);
  EXPECT_EQ(buckets[1].index, 4);
  EXPECT_EQ(buckets[1].members, (std::vector<size_t>{1, 2}));
  EXPECT_NEAR(buckets[1].mean_score, (2.0 + 2.0 / 0.9) / 2.0, 1e-12);
  EXPECT_EQ(buckets[2].index, 8);
  EXPECT_DOUBLE_EQ(buckets[2].mean_score, 4.0);
  EXPECT_EQ(store.Best()->candidate_id, "d");
}

TEST(ExemplarStoreTest, RuntimeScoresAreNegatedRuntimes) {
  ExemplarStore store(ScoreKind::kRuntime, 1.0, 0.25);
  ASSERT_TRUE(store.Add("slow", 1.1, 0, 0));
  ASSERT_TRUE(store.Add("fast", 0.3, 0, 1));
  EXPECT_DOUBLE_EQ(store.entries()[0].score, -1.1);
  const std::vector<ScoreBucket> buckets = store.Buckets();
  ASSERT_EQ(buckets.size(), 2u);
  EXPECT_EQ(buckets[0].index, -5);  // floor(-1.1 / 0.25) = floor(-4.4)
  EXPECT_EQ(buckets[1].index, -2);  // floor(-0.3 / 0.25) = floor(-1.2)
  EXPECT_EQ(store.Best()->candidate_id, "fast");
}

TEST(ExemplarStoreTest, RejectsDuplicatesAndInvalidRuntimes) {
  ExemplarStore store(ScoreKind::kSpeedup, 1.0, 0.1);
  EXPECT_TRUE(store.Add("a", 0.5, 0, 0));
  EXPECT_FALSE(store.Add("a", 0.4, 0, 1));
  EXPECT_FALSE(store.Add("b", 0.0, 0, 1));
  EXPECT_FALSE(store.Add("c", -1.0, 0, 1));
  EXPECT_FALSE(store.Add("d", std::numeric_limits<double>::infinity(), 0, 1));
  EXPECT_FALSE(store.Add("e", std::nan(""), 0, 1));
  EXPECT_EQ(store.size(), 1u);
  EXPECT_EQ(ExemplarStore(ScoreKind::kSpeedup, 1.0, 0.1).Best(), nullptr);
}

TEST(ExemplarStoreTest, TruncateKeepsTheOldest) {
  ExemplarStore store(ScoreKind::kSpeedup, 1.0, 0.1);
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(store.Add("c" + std::to_string(i), 1.0 - 0.1 * i, 0, i));
  store.Truncate(2);
  ASSERT_EQ(store.size(), 2u);
  EXPECT_EQ(store.entries()[1].candidate_id, "c1");
  store.Truncate(10);  // no-op
  EXPECT_EQ(store.size(), 2u);
  EXPECT_EQ(store.Find("c3"), nullptr);
  EXPECT_NE(store.Find("c0"), nullptr);
}

TEST(ExemplarStoreTest, JsonRoundTrip) {
  ExemplarStore store(ScoreKind::kRuntime, 3.0, 0.2);
  ASSERT_TRUE(store.Add("x", 1.5, 2, 9));
  ASSERT_TRUE(store.Add("y", 0.7, 1, 11));
  Result<ExemplarStore> back = ExemplarStore::FromJson(store.ToJson());
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back->ToJson(), store.ToJson());
  EXPECT_EQ(back->kind(), ScoreKind::kRuntime);
  EXPECT_EQ(back->entries()[0].island, 2);

  nlohmann::json bad = store.ToJson();
  bad["score"] = "throughput";
  EXPECT_FALSE(ExemplarStore::FromJson(bad).ok());
  EXPECT_FALSE(ExemplarStore::FromJson(nlohmann::json::object()).ok());
}

}  // namespace
}  // namespace kforge::search
