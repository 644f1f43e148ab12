#include "common/config.h"

#include <gtest/gtest.h>

namespace kforge {
namespace {

ConfigSchema TestSchema() {
  ConfigSchema s;
  s.Add({"pacevolve.momentum_beta", 0.9, "beta"});
  s.Add({"pacevolve.max_ideas", int64_t{10}, "K_idea"});
  s.Add({"eval.device", std::string("auto"), "device"});
  s.Add({"eval.flush_l2", true, "flush"});
  s.Add({"llm.openai_api_key", std::string(""), "key", /*secret=*/true});
  s.AddOpenTable("prices.", "per-model prices");
  return s;
}

TEST(ConfigTest, DefaultsThenTomlThenSet) {
  ConfigSchema schema = TestSchema();
  Config c(schema);
  EXPECT_DOUBLE_EQ(c.GetDouble("pacevolve.momentum_beta"), 0.9);
  ASSERT_TRUE(c.LoadTomlString("[pacevolve]\nmomentum_beta = 0.5\nmax_ideas = 4\n", "t").ok());
  EXPECT_DOUBLE_EQ(c.GetDouble("pacevolve.momentum_beta"), 0.5);
  EXPECT_EQ(c.GetInt("pacevolve.max_ideas"), 4);
  ASSERT_TRUE(c.SetOverride("pacevolve.momentum_beta=0.25").ok());
  EXPECT_DOUBLE_EQ(c.GetDouble("pacevolve.momentum_beta"), 0.25);
  ASSERT_TRUE(c.SetOverride("eval.flush_l2=false").ok());
  EXPECT_FALSE(c.GetBool("eval.flush_l2"));
}

TEST(ConfigTest, UnknownKeysAndBadValuesAreBadInput) {
  ConfigSchema schema = TestSchema();
  Config c(schema);
  Status s = c.SetOverride("pacevolve.momentum_betta=0.5");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().kind, ErrorKind::kBadInput);
  EXPECT_NE(s.error().message.find("momentum_betta"), std::string::npos);
  EXPECT_FALSE(c.SetOverride("pacevolve.max_ideas=many").ok());
  EXPECT_FALSE(c.SetOverride("no_equals_sign").ok());
  EXPECT_FALSE(c.LoadTomlString("[eval]\nbogus = 1\n", "t").ok());
  EXPECT_FALSE(c.LoadTomlString("[eval\n", "t").ok());
  EXPECT_FALSE(c.LoadTomlString("[eval]\ndevice = 3\n", "t").ok());
}

TEST(ConfigTest, GetIntInRangeNamesTheKeyTheRangeAndTheValue) {
  ConfigSchema schema = TestSchema();
  Config c(schema);
  auto in = c.GetIntInRange("pacevolve.max_ideas", 1, 10);
  ASSERT_TRUE(in.ok());
  EXPECT_EQ(*in, 10);
  ASSERT_TRUE(c.SetOverride("pacevolve.max_ideas=11").ok());
  auto out = c.GetIntInRange("pacevolve.max_ideas", 1, 10);
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.error().kind, ErrorKind::kBadInput);
  EXPECT_EQ(out.error().message,
            "config key 'pacevolve.max_ideas' must be between 1 and 10, got 11");
}

TEST(ConfigTest, IntegerAcceptedWhereNumberDeclared) {
  ConfigSchema schema = TestSchema();
  Config c(schema);
  ASSERT_TRUE(c.LoadTomlString("pacevolve.momentum_beta = 1\n", "t").ok());
  EXPECT_DOUBLE_EQ(c.GetDouble("pacevolve.momentum_beta"), 1.0);
}

TEST(ConfigTest, OpenTablesAndSecretMasking) {
  ConfigSchema schema = TestSchema();
  Config c(schema);
  ASSERT_TRUE(c.LoadTomlString("[prices.\"gpt-x\"]\ninput_per_mtok = 2.5\n", "t").ok());
  auto table = c.Table("prices.");
  ASSERT_EQ(table.size(), 1u);
  EXPECT_EQ(ConfigValueToString(table.begin()->second), "2.5");
  ASSERT_TRUE(c.Set("llm.openai_api_key", "sk-secret").ok());
  for (const auto& [k, v] : c.EffectiveListing()) {
    EXPECT_EQ(v.find("sk-secret"), std::string::npos) << k;
  }
}

}  // namespace
}  // namespace kforge
