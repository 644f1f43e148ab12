#include "kb/kb_store.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <random>

#include "common/files.h"
#include "kb/performance_state.h"

namespace kforge::kb {
namespace {

namespace fs = std::filesystem;

TEST(DefaultKnowledgeBase, CoversEveryRuleStateWithConservativePriors) {
  auto kb = DefaultKnowledgeBase("sm_90");
  ASSERT_TRUE(kb.ok()) << kb.error().message;
  EXPECT_EQ(kb->arch(), "sm_90");
  for (const char* state : {kMemoryBound, kComputeBound, kNearRoofline, kLatencyBound,
                            kOccupancyLimited, kLaunchBound, kUnknown}) {
    auto it = kb->states().find(state);
    ASSERT_NE(it, kb->states().end()) << state;
    EXPECT_FALSE(it->second.description.empty()) << state;
    EXPECT_FALSE(it->second.signature.empty()) << state;
    ASSERT_GE(it->second.optimizations.size(), 2u) << state;
    for (const auto& o : it->second.optimizations) {
      EXPECT_EQ(o.attempts, 0) << o.technique;
      EXPECT_FALSE(o.description.empty()) << o.technique;
      // Conservative: no prior promises more than 1.3x or less than no gain.
      EXPECT_GT(o.PredictedGain(), 1.0) << o.technique;
      EXPECT_LT(o.PredictedGain(), 1.3) << o.technique;
    }
  }
  // Selection works on it as shipped.
  std::mt19937_64 rng(7);
  auto picks = kb->Select(kMemoryBound, {}, rng);
  EXPECT_EQ(picks.size(), 3u);
}

TEST(ArchFromCapability, NamesTheSmVersion) {
  EXPECT_EQ(ArchFromCapability("9.0"), "sm_90");
  EXPECT_EQ(ArchFromCapability("8.6"), "sm_86");
  EXPECT_EQ(ArchFromCapability(""), "");
}

class KbStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto dir = MakeTempDir(fs::temp_directory_path(), "kforge-kb-store-");
    ASSERT_TRUE(dir.ok());
    dir_ = *dir;
    auto s = OpenStore((dir_ / "kb.db").string());
    ASSERT_TRUE(s.ok()) << s.error().message;
    store_ = std::move(s).value();
  }
  void TearDown() override {
    store_.reset();
    fs::remove_all(dir_);
  }
  fs::path dir_;
  std::unique_ptr<Store> store_;
};

TEST_F(KbStoreTest, AnArchWithNothingStoredStartsFromTheDefault) {
  auto kb = LoadKnowledgeBase(*store_, "sm_80");
  ASSERT_TRUE(kb.ok()) << kb.error().message;
  EXPECT_EQ(kb->arch(), "sm_80");
  EXPECT_TRUE(kb->Find(kMemoryBound, "kernel_fusion"));
}

TEST_F(KbStoreTest, WhatIsSavedIsLoadedPerArch) {
  auto kb = LoadKnowledgeBase(*store_, "sm_90");
  ASSERT_TRUE(kb.ok());
  kb->Record(kMemoryBound, "kernel_fusion", {true, 1.8});
  kb->Record("discovered_state", "new_trick", {false, 1.0});
  ASSERT_TRUE(SaveKnowledgeBase(*store_, *kb).ok());
  auto again = LoadKnowledgeBase(*store_, "sm_90");
  ASSERT_TRUE(again.ok()) << again.error().message;
  const Optimization* o = again->Find(kMemoryBound, "kernel_fusion");
  ASSERT_TRUE(o);
  EXPECT_EQ(o->attempts, 1);
  EXPECT_EQ(o->successes, 1);
  EXPECT_TRUE(again->Find("discovered_state", "new_trick"));
  EXPECT_EQ(again->ToJson(), kb->ToJson());
  // Another architecture is untouched.
  auto other = LoadKnowledgeBase(*store_, "sm_80");
  ASSERT_TRUE(other.ok());
  EXPECT_EQ(other->Find(kMemoryBound, "kernel_fusion")->attempts, 0);
  // An architecture-less base cannot be stored.
  EXPECT_FALSE(SaveKnowledgeBase(*store_, KnowledgeBase("")).ok());
}

TEST_F(KbStoreTest, ContractJsonListsStatesAndOptimizations) {
  auto kb = LoadKnowledgeBase(*store_, "sm_90");
  ASSERT_TRUE(kb.ok());
  auto j = kb->ToContractJson();
  ASSERT_TRUE(j["states"].is_array());
  ASSERT_TRUE(j["optimizations"].is_array());
  for (const auto& s : j["states"]) {
    for (const char* key : {"id", "name", "description", "signature"}) {
      EXPECT_TRUE(s.contains(key)) << key;
    }
  }
  for (const auto& o : j["optimizations"]) {
    for (const char* key : {"id", "state", "technique", "description", "attempts", "successes",
                            "mean_log_speedup", "predicted_gain"}) {
      EXPECT_TRUE(o.contains(key)) << key;
    }
  }
}

}  // namespace
}  // namespace kforge::kb
