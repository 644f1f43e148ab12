#include "search/pacevolve/failure_log.h"

#include <gtest/gtest.h>

namespace kforge::search::pacevolve {
namespace {

FailureEntry Rejected(std::string text) {
  FailureEntry e;
  e.kind = FailureKind::kRejectedHypothesis;
  e.text = std::move(text);
  e.reason = "not accepted: compile error";
  return e;
}

TEST(FailureLogTest, NormalisationIgnoresCaseAndPunctuation) {
  EXPECT_EQ(FailureLog::NormalizedWords("Use 128x128 tiles, with cp.async!"),
            (std::vector<std::string>{"use", "128x128", "tiles", "with", "cp", "async"}));
  EXPECT_DOUBLE_EQ(FailureLog::Similarity("Use 128x128 tiles.", "use 128X128   tiles"), 1.0);
}

TEST(FailureLogTest, JaccardSimilarityByHand) {
  // {128x128, tiles} vs {128x64, tiles}: 1 common of 3.
  EXPECT_NEAR(FailureLog::Similarity("128x128 tiles", "128x64 tiles"), 1.0 / 3.0, 1e-15);
  // Ten words, nine shared: 9 / 11.
  EXPECT_NEAR(FailureLog::Similarity("a b c d e f g h i j", "a b c d e f g h i k"), 9.0 / 11.0,
              1e-15);
}

TEST(FailureLogTest, MatchesRespectTheThresholdAndTheKind) {
  FailureLog strict(0.9);
  strict.Add(Rejected("a b c d e f g h i j"));
  EXPECT_NE(strict.FindMatch(FailureKind::kRejectedHypothesis, "A B C D E F G H I J."), nullptr);
  EXPECT_EQ(strict.FindMatch(FailureKind::kRejectedHypothesis, "a b c d e f g h i k"), nullptr);
  EXPECT_EQ(strict.FindMatch(FailureKind::kPrunedIdea, "a b c d e f g h i j"), nullptr);

  FailureLog loose(0.8);
  loose.Add(Rejected("a b c d e f g h i j"));
  EXPECT_NE(loose.FindMatch(FailureKind::kRejectedHypothesis, "a b c d e f g h i k"), nullptr);
}

TEST(FailureLogTest, EmptyTextsNeverMatch) {
  FailureLog log;
  log.Add(Rejected("..."));
  log.Add(Rejected("vectorise loads"));
  EXPECT_EQ(log.FindMatch(FailureKind::kRejectedHypothesis, ""), nullptr);
  EXPECT_EQ(log.FindMatch(FailureKind::kRejectedHypothesis, "!!"), nullptr);
  EXPECT_EQ(log.FindMatch(FailureKind::kRejectedHypothesis, "Vectorise loads")->text,
            "vectorise loads");
}

TEST(FailureLogTest, JsonRoundTrip) {
  FailureLog log(0.85);
  FailureEntry pruned;
  pruned.kind = FailureKind::kPrunedIdea;
  pruned.text = "warp specialisation";
  pruned.island = 1;
  pruned.idea_id = 4;
  pruned.iteration = 17;
  pruned.runtime_ms = 0.42;
  pruned.reason = "no gain after 6 tries";
  log.Add(pruned);
  log.Add(Rejected("unroll by 8"));
  Result<FailureLog> back = FailureLog::FromJson(log.ToJson(), 0.85);
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back->ToJson(), log.ToJson());
  EXPECT_EQ(back->entries()[0].runtime_ms, 0.42);
  EXPECT_FALSE(back->entries()[1].runtime_ms.has_value());

  nlohmann::json bad = log.ToJson();
  bad[0]["kind"] = "forgotten";
  EXPECT_FALSE(FailureLog::FromJson(bad, 0.9).ok());
  EXPECT_FALSE(FailureLog::FromJson(nlohmann::json::object(), 0.9).ok());
}

}  // namespace
}  // namespace kforge::search::pacevolve
