#include "search/pacevolve/idea_pool.h"

#include <gtest/gtest.h>

namespace kforge::search::pacevolve {
namespace {

Hypothesis Attempt(std::string description, std::optional<double> runtime) {
  Hypothesis h;
  h.description = std::move(description);
  h.accepted = runtime.has_value();
  h.runtime_ms = runtime;
  h.candidate_id = "c-" + h.description;
  return h;
}

TEST(IdeaPoolTest, AddMergeRecordTrackBestResult) {
  IdeaPool pool(5, 3);
  const int a = pool.Add("Tile the reduction in shared memory.", "cuts global traffic");
  const int b = pool.Add("Fuse bias and GELU.", "one pass");
  EXPECT_EQ(a, 1);
  EXPECT_EQ(b, 2);
  ASSERT_TRUE(pool.Merge(a, "Tile the reduction in shared memory with 128-wide blocks.").ok());
  EXPECT_EQ(pool.Find(a)->description, "Tile the reduction in shared memory with 128-wide blocks.");
  EXPECT_EQ(pool.Merge(99, "x").error().kind, ErrorKind::kNotFound);

  ASSERT_TRUE(pool.Record(a, Attempt("block 128", 0.9)).ok());
  ASSERT_TRUE(pool.Record(a, Attempt("block 256", std::nullopt)).ok());  // not accepted
  ASSERT_TRUE(pool.Record(a, Attempt("block 64", 0.7)).ok());
  EXPECT_EQ(pool.Find(a)->best_runtime_ms, 0.7);
  EXPECT_EQ(pool.Find(a)->best_candidate_id, "c-block 64");
  EXPECT_FALSE(pool.Find(b)->best_runtime_ms.has_value());
  EXPECT_EQ(pool.Record(42, Attempt("x", 1.0)).error().kind, ErrorKind::kNotFound);
}

TEST(IdeaPoolTest, SummaryTriggersAboveKHyp) {
  IdeaPool pool(5, 3);  // K_hyp = 3
  const int a = pool.Add("idea", "");
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(pool.Record(a, Attempt("h" + std::to_string(i), 1.0 - 0.1 * i)).ok());
    EXPECT_FALSE(pool.NeedsSummary(a)) << i;  // 1, 2, 3 hypotheses: not more than K_hyp
  }
  ASSERT_TRUE(pool.Record(a, Attempt("h3", 2.0)).ok());
  EXPECT_TRUE(pool.NeedsSummary(a));  // 4 > 3
  EXPECT_FALSE(pool.NeedsSummary(77));

  ASSERT_TRUE(pool.ApplySummary(a, "Best 0.8 ms with h2; larger blocks hurt.").ok());
  const Idea* idea = pool.Find(a);
  EXPECT_TRUE(idea->hypotheses.empty());
  EXPECT_EQ(idea->summarized_hypotheses, 4);
  EXPECT_EQ(idea->TotalHypotheses(), 4);
  EXPECT_EQ(idea->key_findings, "Best 0.8 ms with h2; larger blocks hurt.");
  EXPECT_EQ(idea->best_runtime_ms, 0.8);  // kept through the summary
  EXPECT_FALSE(pool.NeedsSummary(a));
  ASSERT_TRUE(pool.Record(a, Attempt("h4", 0.75)).ok());
  EXPECT_EQ(pool.Find(a)->TotalHypotheses(), 5);
}

TEST(IdeaPoolTest, PruneTriggersAboveKIdeaAndRemovalIsAllOrNothing) {
  IdeaPool pool(2, 5);  // K_idea = 2
  const int a = pool.Add("a", "");
  const int b = pool.Add("b", "");
  EXPECT_FALSE(pool.NeedsPrune());
  const int c = pool.Add("c", "");
  EXPECT_TRUE(pool.NeedsPrune());

  EXPECT_EQ(pool.Remove({a, 99}).error().kind, ErrorKind::kNotFound);
  EXPECT_EQ(pool.Remove({a, a}).error().kind, ErrorKind::kBadInput);
  EXPECT_EQ(pool.size(), 3u);  // nothing removed by the failed calls

  Result<std::vector<Idea>> removed = pool.Remove({b});
  ASSERT_TRUE(removed.ok());
  ASSERT_EQ(removed->size(), 1u);
  EXPECT_EQ((*removed)[0].description, "b");
  EXPECT_FALSE(pool.NeedsPrune());
  EXPECT_TRUE(pool.Contains(a));
  EXPECT_TRUE(pool.Contains(c));
}

TEST(IdeaPoolTest, RankingPutsFastestFirstAndUntriedLast) {
  IdeaPool pool(5, 5);
  const int slow = pool.Add("slow", "");
  const int untried = pool.Add("untried", "");
  const int fast = pool.Add("fast", "");
  const int failed = pool.Add("failed", "");
  ASSERT_TRUE(pool.Record(slow, Attempt("s", 2.0)).ok());
  ASSERT_TRUE(pool.Record(fast, Attempt("f", 1.0)).ok());
  ASSERT_TRUE(pool.Record(failed, Attempt("x", std::nullopt)).ok());
  EXPECT_EQ(pool.RankedIds(), (std::vector<int>{fast, slow, untried, failed}));
}

TEST(IdeaPoolTest, ImportAndRestoreNeverReuseIds) {
  IdeaPool source(5, 5);
  const int s = source.Add("remote idea", "");
  ASSERT_TRUE(source.Record(s, Attempt("r", 0.5)).ok());

  IdeaPool pool(5, 5);
  pool.Add("x", "");
  const IdeaPool snapshot = pool;  // next id 2
  pool.Add("y", "");
  const int imported = pool.Import(*source.Find(s), /*origin_island=*/3);
  EXPECT_EQ(imported, 3);
  EXPECT_EQ(pool.Find(imported)->origin_island, 3);
  EXPECT_EQ(pool.Find(imported)->best_runtime_ms, 0.5);
  EXPECT_EQ(pool.FindByDescription("Remote idea.")->id, imported);

  pool.RestoreFrom(snapshot);
  EXPECT_EQ(pool.size(), 1u);
  EXPECT_EQ(pool.next_id(), 4);  // the counter survives the restore
  EXPECT_EQ(pool.Add("z", ""), 4);
}

TEST(IdeaPoolTest, JsonRoundTrip) {
  IdeaPool pool(4, 2);
  const int a = pool.Add("a", "why a");
  pool.Add("b", "why b");
  ASSERT_TRUE(pool.Record(a, Attempt("h", 1.5)).ok());
  ASSERT_TRUE(pool.ApplySummary(a, "findings").ok());
  ASSERT_TRUE(pool.Record(a, Attempt("h2", std::nullopt)).ok());
  Result<IdeaPool> back = IdeaPool::FromJson(pool.ToJson());
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back->ToJson(), pool.ToJson());
  EXPECT_EQ(back->next_id(), 3);

  nlohmann::json dup = pool.ToJson();
  dup["ideas"][1]["id"] = a;
  EXPECT_FALSE(IdeaPool::FromJson(dup).ok());
}

TEST(CountSentencesTest, Cases) {
  EXPECT_EQ(CountSentences(""), 0);
  EXPECT_EQ(CountSentences("   "), 0);
  EXPECT_EQ(CountSentences("Fuse the epilogue"), 1);
  EXPECT_EQ(CountSentences("Fuse the epilogue."), 1);
  EXPECT_EQ(CountSentences("Fuse the epilogue. Then vectorise loads."), 2);
  EXPECT_EQ(CountSentences("Use e.g. 64-wide tiles. Then fuse."), 2);
  EXPECT_EQ(CountSentences("Aim for 3.5 ms with 2 stages."), 1);
  EXPECT_EQ(CountSentences("One! Two? Three."), 3);
  EXPECT_EQ(CountSentences("Approx. 3x faster. Then fuse"), 2);
  EXPECT_EQ(CountSentences("One... Two stages help. Three"), 3);
}

}  // namespace
}  // namespace kforge::search::pacevolve
