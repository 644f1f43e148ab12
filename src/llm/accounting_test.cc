#include "llm/accounting.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "llm/llm_settings.h"

namespace kforge::llm {
namespace {

TEST(PriceTable, MatchesExactThenLongestPrefix) {
  PriceTable t = PriceTable::BuiltIn();
  auto mini = t.Find("gpt-4o-mini-2024-07-18");
  ASSERT_TRUE(mini.has_value());
  EXPECT_DOUBLE_EQ(mini->input_per_mtok, 0.15);
  auto dated = t.Find("gpt-4o-2024-08-06");
  ASSERT_TRUE(dated.has_value());
  EXPECT_DOUBLE_EQ(dated->input_per_mtok, 2.50);
  EXPECT_FALSE(t.Find("qwen2.5-coder:7b").has_value());
  EXPECT_DOUBLE_EQ(t.Cost("qwen2.5-coder:7b", {1000000, 1000000}), 0.0);
  // 2M in at $2.50 + 0.5M out at $10 = $10.
  EXPECT_DOUBLE_EQ(t.Cost("gpt-4o", {2000000, 500000}), 10.0);
}

TEST(PriceTable, ConfigOverridesAndAddsModels) {
  ConfigSchema schema;
  RegisterLlmConfig(schema);
  Config config(schema);
  ASSERT_TRUE(config
                  .LoadTomlString(R"(
[prices."gpt-4.1"]
input_per_mtok = 1
[prices.my-local]
input_per_mtok = 0.5
output_per_mtok = 1.5
)",
                                  "test.toml")
                  .ok());
  auto table = PriceTable::FromConfig(config);
  ASSERT_TRUE(table.ok()) << table.error().message;
  EXPECT_DOUBLE_EQ(table->Find("gpt-4.1")->input_per_mtok, 1.0);
  EXPECT_DOUBLE_EQ(table->Find("gpt-4.1")->output_per_mtok, 8.0);  // kept from the built-in
  EXPECT_DOUBLE_EQ(table->Find("my-local")->output_per_mtok, 1.5);
  EXPECT_DOUBLE_EQ(table->Cost("my-local", {2000000, 0}), 1.0);
}

TEST(PriceTable, RejectsUnknownPriceFields) {
  ConfigSchema schema;
  RegisterLlmConfig(schema);
  Config bad_field(schema);
  ASSERT_TRUE(bad_field.Set("prices.gpt-4o.input", "1").ok());  // the open table accepts it...
  auto r = PriceTable::FromConfig(bad_field);                   // ...the price table does not
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("prices.gpt-4o.input"), std::string::npos);
  Config negative(schema);
  ASSERT_TRUE(negative.Set("prices.m.output_per_mtok", "-2").ok());
  EXPECT_FALSE(PriceTable::FromConfig(negative).ok());
  Config text(schema);
  ASSERT_TRUE(text.Set("prices.m.output_per_mtok", "cheap").ok());
  EXPECT_FALSE(PriceTable::FromConfig(text).ok());
}

TEST(Budget, StopsAtEachCap) {
  Budget calls({0, 0, 2});
  EXPECT_TRUE(calls.Reserve().ok());
  EXPECT_TRUE(calls.Reserve().ok());
  auto third = calls.Reserve();
  ASSERT_FALSE(third.ok());
  EXPECT_EQ(third.error().kind, LlmErrorKind::kBudgetExhausted);
  EXPECT_EQ(LlmErrorKindName(third.error().kind), "budget_exhausted");
  EXPECT_FALSE(third.error().retryable());

  Budget tokens({0, 100, 0});
  ASSERT_TRUE(tokens.Reserve().ok());
  tokens.Settle({60, 39}, 0);
  EXPECT_TRUE(tokens.Reserve().ok());  // 99 < 100
  tokens.Settle({0, 1}, 0);
  EXPECT_EQ(tokens.Reserve().error().kind, LlmErrorKind::kBudgetExhausted);
  EXPECT_EQ(*tokens.Exhausted(), "tokens (100 of 100)");

  Budget usd({0.5, 0, 0});
  ASSERT_TRUE(usd.Reserve().ok());
  usd.Settle({1, 1}, 0.5);
  auto over = usd.Reserve();
  ASSERT_FALSE(over.ok());
  EXPECT_NE(over.error().message.find("usd"), std::string::npos);
  EXPECT_EQ(usd.spend().calls, 1);  // a refused call is not counted
}

TEST(Budget, RestoresSpendOfAResumedRun) {
  Budget b({1.0, 0, 10});
  b.Restore({10, 5, 5, 0.1});
  EXPECT_EQ(b.Reserve().error().kind, LlmErrorKind::kBudgetExhausted);
}

TEST(Budget, CallCapHoldsUnderConcurrency) {
  Budget b({0, 0, 50});
  std::atomic<int> granted{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 20; ++i) {
        if (b.Reserve().ok()) ++granted;
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(granted.load(), 50);
}

}  // namespace
}  // namespace kforge::llm
