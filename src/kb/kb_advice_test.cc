#include "kb/kb_advice.h"

#include <gtest/gtest.h>

#include "kb/kb_store.h"
#include "kb/performance_state.h"

namespace kforge::kb {
namespace {

const std::vector<std::string> kOffered = {"kernel_fusion", "vectorized_access",
                                           "shared_memory_reuse"};

TEST(ParseTechnique, PlainLineNamesAnOfferedTechnique) {
  EXPECT_EQ(ParseTechnique("Technique: kernel_fusion\n\n```python\nx = 1\n```\n", kOffered),
            "kernel_fusion");
}

TEST(ParseTechnique, MarkdownCaseAndWordsAreTolerated) {
  EXPECT_EQ(ParseTechnique("**Technique:** `vectorized_access`", kOffered), "vectorized_access");
  EXPECT_EQ(ParseTechnique("technique: Kernel Fusion.", kOffered), "kernel_fusion");
  EXPECT_EQ(ParseTechnique("- Applied technique: shared-memory-reuse (tiles of 32)", kOffered),
            "shared_memory_reuse");
  EXPECT_EQ(ParseTechnique("### Technique used: kernel_fusion, because the ops chain", kOffered),
            "kernel_fusion");
  EXPECT_EQ(ParseTechnique("Technique: kernel_fusion of the three passes", kOffered),
            "kernel_fusion");
}

TEST(ParseTechnique, ANewPlausibleNameIsKeptAndNoneIsNone) {
  EXPECT_EQ(ParseTechnique("Technique: loop_unrolling", kOffered), "loop_unrolling");
  EXPECT_EQ(ParseTechnique("Technique: none", kOffered), std::nullopt);
  EXPECT_EQ(ParseTechnique("Technique: N/A", kOffered), std::nullopt);
  EXPECT_EQ(ParseTechnique("I fused everything.\n```python\nx = 1\n```", kOffered), std::nullopt);
  // Prose is not an id.
  EXPECT_EQ(ParseTechnique("Technique: I decided to rewrite the whole thing from scratch today",
                           kOffered),
            std::nullopt);
  // A line that merely mentions the word is not a technique line.
  EXPECT_EQ(ParseTechnique("The best technique for this kind of kernel is fusion: it saves "
                           "passes",
                           kOffered),
            std::nullopt);
}

TEST(ParseTechnique, OutsideCodeWinsOverACommentInsideIt) {
  std::string reply =
      "```python\n# Technique: vectorized_access\nx = 1\n```\nTechnique: kernel_fusion\n";
  EXPECT_EQ(ParseTechnique(reply, kOffered), "kernel_fusion");
  // Only inside the code: still read.
  EXPECT_EQ(ParseTechnique("```python\n# Technique: vectorized_access\n```\n", kOffered),
            "vectorized_access");
  // The last line outside code wins (a corrected choice).
  EXPECT_EQ(ParseTechnique("Technique: kernel_fusion\nTechnique: shared_memory_reuse\n", kOffered),
            "shared_memory_reuse");
}

TEST(Advise, DrawsKDistinctOffersOfTheStateDeterministically) {
  KnowledgeBase kb = DefaultKnowledgeBase("cpu").value();
  SelectionOptions o{3, 0.2};
  KbAdvice a =
      Advise(kb, kMemoryBound, "The reference program", "details", o, SelectionSeed(42, 0, 0));
  EXPECT_EQ(a.state, kMemoryBound);
  EXPECT_FALSE(a.state_description.empty());
  ASSERT_EQ(a.offers.size(), 3u);
  std::set<std::string> ids;
  for (const auto& offer : a.offers) {
    ids.insert(offer.technique);
    EXPECT_NE(kb.Find(kMemoryBound, offer.technique), nullptr);
    EXPECT_GT(offer.predicted_gain, 1.0);
    EXPECT_FALSE(offer.description.empty());
  }
  EXPECT_EQ(ids.size(), 3u);
  KbAdvice again =
      Advise(kb, kMemoryBound, "The reference program", "details", o, SelectionSeed(42, 0, 0));
  for (size_t i = 0; i < a.offers.size(); ++i) {
    EXPECT_EQ(a.offers[i].technique, again.offers[i].technique);
  }
}

TEST(Advise, AStateTheBaseLacksFallsBackToUnknown) {
  KnowledgeBase kb = DefaultKnowledgeBase("cpu").value();
  KbAdvice a = Advise(kb, "no_such_state", "x", "", {3, 0.2}, 1);
  EXPECT_EQ(a.state, kUnknown);
  EXPECT_FALSE(a.offers.empty());
}

TEST(SelectionSeed, DiffersBySeedSlotAndDraw) {
  std::set<uint64_t> seeds = {SelectionSeed(1, 0, 0), SelectionSeed(2, 0, 0),
                              SelectionSeed(1, 1, 0), SelectionSeed(1, 0, 1)};
  EXPECT_EQ(seeds.size(), 4u);
  EXPECT_EQ(SelectionSeed(7, 3, 1), SelectionSeed(7, 3, 1));
}

TEST(KbAdvice, JsonRoundTripAndOffersText) {
  KbAdvice a;
  a.state = kMemoryBound;
  a.profile_of = "The reference program";
  a.details = "1 kernel, memory 88%";
  a.offers = {{"kernel_fusion", "fuse the ops", "works on chains", 1.25}};
  auto back = KbAdvice::FromJson(a.ToJson());
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back->state, a.state);
  EXPECT_EQ(back->details, a.details);
  ASSERT_EQ(back->offers.size(), 1u);
  EXPECT_EQ(back->offers[0].notes, "works on chains");
  EXPECT_DOUBLE_EQ(back->offers[0].predicted_gain, 1.25);
  EXPECT_FALSE(KbAdvice::FromJson(nlohmann::json::array()).ok());
  std::string text = OffersText(a);
  EXPECT_NE(text.find("`kernel_fusion` (predicted gain 1.25x): fuse the ops"), std::string::npos);
  EXPECT_NE(text.find("Learned so far: works on chains"), std::string::npos);
}

}  // namespace
}  // namespace kforge::kb
