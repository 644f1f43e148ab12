#include "kb/knowledge_base.h"

#include <gtest/gtest.h>

#include <cmath>
#include <map>

namespace kforge::kb {
namespace {

Optimization Opt(const std::string& technique, double prior_gain) {
  Optimization o;
  o.technique = technique;
  o.description = technique + " description";
  o.prior_log_gain = std::log(prior_gain);
  return o;
}

TEST(KnowledgeBase, PriorAloneSetsThePredictionAndAttemptsMoveIt) {
  KnowledgeBase kb("sm_90");
  kb.AddOptimization("memory_bound", Opt("vectorized_loads", 1.2));
  EXPECT_NEAR(kb.Find("memory_bound", "vectorized_loads")->PredictedGain(), 1.2, 1e-12);

  const Optimization& o = kb.Record("memory_bound", "vectorized_loads", {true, 2.0});
  EXPECT_EQ(o.attempts, 1);
  EXPECT_EQ(o.successes, 1);
  // (2·log 1.2 + log 2) / 3
  EXPECT_NEAR(o.PredictedGain(), std::exp((2 * std::log(1.2) + std::log(2.0)) / 3), 1e-12);
  EXPECT_NEAR(o.MeanLogSpeedup(), std::log(2.0), 1e-12);
}

TEST(KnowledgeBase, FailuresAndNonGainsCountAgainst) {
  KnowledgeBase kb;
  kb.Record("latency_bound", "loop_unrolling", {false, 0});
  const Optimization& o = kb.Record("latency_bound", "loop_unrolling", {true, 1.005});
  EXPECT_EQ(o.attempts, 2);
  EXPECT_EQ(o.successes, 0);  // 1.005x is below the success bar
  EXPECT_LT(o.PredictedGain(), 1.0);
  EXPECT_NEAR(o.sum_log_speedup, KnowledgeBase::kFailedLogSpeedup + std::log(1.005), 1e-12);
}

TEST(KnowledgeBase, RecordAddsDiscoveredStatesAndTechniques) {
  KnowledgeBase kb;
  kb.Record("tensor_core_starved", "wgmma_pipeline", {true, 1.5});
  ASSERT_NE(kb.Find("tensor_core_starved", "wgmma_pipeline"), nullptr);
  EXPECT_EQ(kb.states().size(), 1u);
  EXPECT_TRUE(kb.RewriteNotes("tensor_core_starved", "wgmma_pipeline", "needs TMA loads").ok());
  EXPECT_EQ(kb.Find("tensor_core_starved", "wgmma_pipeline")->notes, "needs TMA loads");
  EXPECT_FALSE(kb.RewriteNotes("tensor_core_starved", "nope", "x").ok());
}

TEST(KnowledgeBase, SelectionFavoursHigherGainButExplores) {
  KnowledgeBase kb;
  kb.AddOptimization("memory_bound", Opt("best", 1.6));
  kb.AddOptimization("memory_bound", Opt("middle", 1.2));
  kb.AddOptimization("memory_bound", Opt("weak", 1.02));
  std::mt19937_64 rng(7);
  std::map<std::string, int> first;
  const int draws = 20000;
  for (int i = 0; i < draws; ++i) {
    auto picked = kb.Select("memory_bound", {1, 0.2}, rng);
    ASSERT_EQ(picked.size(), 1u);
    ++first[picked[0]->technique];
  }
  // Weights exp(log g / 0.2) = g^5: 10.49, 2.49, 1.10 → shares 0.744, 0.177, 0.078.
  double total = std::pow(1.6, 5) + std::pow(1.2, 5) + std::pow(1.02, 5);
  EXPECT_NEAR(first["best"] / double(draws), std::pow(1.6, 5) / total, 0.015);
  EXPECT_NEAR(first["middle"] / double(draws), std::pow(1.2, 5) / total, 0.015);
  EXPECT_NEAR(first["weak"] / double(draws), std::pow(1.02, 5) / total, 0.015);
}

TEST(KnowledgeBase, SelectionReturnsDistinctTechniquesUpToK) {
  KnowledgeBase kb;
  for (auto t : {"a", "b", "c", "d"}) kb.AddOptimization("s", Opt(t, 1.1));
  std::mt19937_64 rng(1);
  auto picked = kb.Select("s", {3, 0.2}, rng);
  ASSERT_EQ(picked.size(), 3u);
  EXPECT_NE(picked[0], picked[1]);
  EXPECT_NE(picked[1], picked[2]);
  EXPECT_NE(picked[0], picked[2]);
  EXPECT_EQ(kb.Select("s", {10, 0.2}, rng).size(), 4u);
  EXPECT_TRUE(kb.Select("unknown", {3, 0.2}, rng).empty());
}

TEST(KnowledgeBase, JsonRoundTripKeepsEverything) {
  KnowledgeBase kb("sm_90");
  kb.AddState("memory_bound", "DRAM throughput near peak");
  kb.AddOptimization("memory_bound", Opt("vectorized_loads", 1.2));
  kb.Record("memory_bound", "vectorized_loads", {true, 1.7});
  ASSERT_TRUE(kb.RewriteNotes("memory_bound", "vectorized_loads", "float4 when aligned").ok());
  nlohmann::json j = kb.ToJson();
  auto back = KnowledgeBase::FromJson(nlohmann::json::parse(j.dump()));
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back->ToJson(), j);
  EXPECT_EQ(back->arch(), "sm_90");
}

TEST(KnowledgeBase, FromJsonRejectsBadDocuments) {
  EXPECT_FALSE(KnowledgeBase::FromJson(nlohmann::json::object()).ok());
  nlohmann::json j = KnowledgeBase("sm_90").ToJson();
  j["version"] = 99;
  EXPECT_NE(KnowledgeBase::FromJson(j).error().message.find("version 99"), std::string::npos);
  nlohmann::json bad = {
      {"format", "kforge-kb"},
      {"version", 1},
      {"states",
       {{{"name", "s"},
         {"optimizations", {{{"technique", "t"}, {"attempts", 1}, {"successes", 2}}}}}}}};
  auto r = KnowledgeBase::FromJson(bad);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("inconsistent"), std::string::npos) << r.error().message;
}

TEST(KnowledgeBase, MergeAddsStatistics) {
  KnowledgeBase a("sm_90"), b("sm_90");
  a.Record("memory_bound", "vectorized_loads", {true, 2.0});
  b.Record("memory_bound", "vectorized_loads", {true, 1.5});
  b.Record("compute_bound", "tensor_cores", {true, 3.0});
  a.Merge(b);
  const Optimization* v = a.Find("memory_bound", "vectorized_loads");
  ASSERT_NE(v, nullptr);
  EXPECT_EQ(v->attempts, 2);
  EXPECT_NEAR(v->sum_log_speedup, std::log(2.0) + std::log(1.5), 1e-12);
  ASSERT_NE(a.Find("compute_bound", "tensor_cores"), nullptr);
}

}  // namespace
}  // namespace kforge::kb
