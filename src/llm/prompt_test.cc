#include "llm/prompt.h"

#include <gtest/gtest.h>

namespace kforge::llm {
namespace {

std::string Repeat(char c, size_t n) {
  return std::string(n, c);
}

TEST(Prompt, RendersSystemAndUserSectionsInOrder) {
  Prompt p;
  p.System("role", "You write CUDA.")
      .Text("task", "Make it fast.")
      .History("history", "Earlier attempts", {"first", "second"}, 10);
  auto messages = p.Render();
  ASSERT_EQ(messages.size(), 2u);
  EXPECT_EQ(messages[0].role, Role::kSystem);
  EXPECT_EQ(messages[0].content, "You write CUDA.");
  EXPECT_EQ(messages[1].content, "Make it fast.\n\n## Earlier attempts\nfirst\n\nsecond");
  auto fitted = p.Fit(1000);
  ASSERT_TRUE(fitted.ok());
  EXPECT_TRUE(fitted->trimmed.empty());
  EXPECT_EQ(fitted->messages[1].content, messages[1].content);
  EXPECT_EQ(fitted->estimated_tokens, EstimateTokens(messages));
}

TEST(Prompt, EstimatesByCharactersOverFour) {
  EXPECT_EQ(EstimateTokens(size_t{0}), 0);
  EXPECT_EQ(EstimateTokens(size_t{4}), 1);
  EXPECT_EQ(EstimateTokens(size_t{5}), 2);
  EXPECT_EQ(EstimateTokens({ChatMessage::User(Repeat('x', 400))}), 104);  // 100 + framing
  EXPECT_EQ(PromptBudgetTokens(1000, 200), 700);
  EXPECT_EQ(PromptBudgetTokens(100, 200), 0);
}

TEST(Prompt, TrimsLowestPriorityFirstAndOldestHistoryFirst) {
  Prompt p;
  p.Text("task", Repeat('t', 400), 100);
  p.History("history", "", {Repeat('1', 400), Repeat('2', 400), Repeat('3', 400)}, 20);
  p.Optional("hints", Repeat('h', 400), 10);  // least important: goes first
  // task 100 + history ~300 + hints 100 tokens; allow ~320.
  auto fitted = p.Fit(320);
  ASSERT_TRUE(fitted.ok()) << fitted.error().message;
  const std::string& user = fitted->messages.back().content;
  EXPECT_EQ(user.find('h'), std::string::npos);
  EXPECT_EQ(user.find('1'), std::string::npos);
  EXPECT_NE(user.find('2'), std::string::npos);
  EXPECT_NE(user.find('3'), std::string::npos);
  EXPECT_NE(user.find(Repeat('t', 400)), std::string::npos);
  EXPECT_LE(fitted->estimated_tokens, 320);
  ASSERT_EQ(fitted->trimmed.size(), 2u);
  EXPECT_EQ(fitted->trimmed[0].section, "history");
  EXPECT_EQ(fitted->trimmed[0].action, "dropped 1 oldest item");
  EXPECT_EQ(fitted->trimmed[1].section, "hints");
  EXPECT_EQ(fitted->trimmed[1].action, "dropped");
}

TEST(Prompt, CutsTheOldestTextOfTheLastHistoryItemAtALine) {
  std::string log;
  for (int i = 0; i < 100; ++i) log += "line " + std::to_string(i) + "\n";
  Prompt p;
  p.Text("task", "task");
  p.History("history", "", {log}, 10);
  auto fitted = p.Fit(100);
  ASSERT_TRUE(fitted.ok());
  const std::string& user = fitted->messages.back().content;
  EXPECT_NE(user.find("[... earlier text trimmed ...]\nline "), std::string::npos);
  EXPECT_NE(user.find("line 99\n"), std::string::npos);  // the newest survives
  EXPECT_EQ(user.find("line 0\n"), std::string::npos);
  EXPECT_LE(fitted->estimated_tokens, 100);
  EXPECT_EQ(fitted->trimmed[0].action.rfind("cut ", 0), 0u);
}

TEST(Prompt, CutTailKeepsTheBeginning) {
  PromptSection log;
  log.name = "compiler_log";
  log.trim = TrimPolicy::kCutTail;
  log.priority = 5;
  for (int i = 0; i < 100; ++i) log.items.push_back("error " + std::to_string(i));
  Prompt p;
  p.Text("task", "fix it").Add(log);
  auto fitted = p.Fit(80);
  ASSERT_TRUE(fitted.ok());
  const std::string& user = fitted->messages.back().content;
  EXPECT_NE(user.find("error 0\n"), std::string::npos);
  EXPECT_EQ(user.find("error 99"), std::string::npos);
  EXPECT_NE(user.find("[... rest trimmed ...]"), std::string::npos);
  EXPECT_LE(fitted->estimated_tokens, 80);
}

TEST(Prompt, OverflowsOnlyWhenKeptSectionsAloneDoNotFit) {
  Prompt p;
  p.System("role", Repeat('s', 400)).Text("task", Repeat('t', 400));
  p.History("history", "", {Repeat('x', 4000)}, 1);
  auto fitted = p.Fit(150);
  ASSERT_FALSE(fitted.ok());
  EXPECT_EQ(fitted.error().kind, LlmErrorKind::kContextOverflow);
  EXPECT_NE(fitted.error().message.find("150"), std::string::npos);
  EXPECT_TRUE(p.Fit(220).ok());  // history dropped whole, kept sections fit
  EXPECT_EQ(p.Fit(220)->trimmed[0].action.find("cut"), 0u);
}

}  // namespace
}  // namespace kforge::llm
