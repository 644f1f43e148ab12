#include "search/pacevolve/search_config.h"

#include <gtest/gtest.h>

namespace kforge::search::pacevolve {
namespace {

ConfigSchema Schema() {
  ConfigSchema schema;
  RegisterSearchConfig(schema);
  return schema;
}

TEST(SearchConfigTest, RegistersTheKeysOutsideChecksRelyOn) {
  const ConfigSchema schema = Schema();
  for (const char* key :
       {"pacevolve.momentum_beta", "pacevolve.stagnation_threshold", "pacevolve.freeze_iterations",
        "pacevolve.max_ideas", "pacevolve.max_hypotheses", "contrastive.exemplars",
        "contrastive.temperature", "pacevolve.hcm", "pacevolve.mbb", "pacevolve.ce",
        "pacevolve.islands", "pacevolve.backtrack_power", "pacevolve.target_ms",
        "contrastive.bucket_width"}) {
    const ConfigKey* k = schema.Find(key);
    ASSERT_NE(k, nullptr) << key;
    EXPECT_FALSE(k->doc.empty()) << key;
  }
  // Types the CONTRACT's --set examples rely on.
  EXPECT_TRUE(
      std::holds_alternative<double>(schema.Find("pacevolve.momentum_beta")->default_value));
  EXPECT_TRUE(std::holds_alternative<int64_t>(schema.Find("pacevolve.max_ideas")->default_value));
  EXPECT_TRUE(std::holds_alternative<int64_t>(schema.Find("contrastive.exemplars")->default_value));
}

TEST(SearchConfigTest, DefaultsReadBack) {
  const ConfigSchema schema = Schema();
  Config config(schema);
  Result<PacEvolveOptions> o = PacEvolveOptionsFromConfig(config);
  ASSERT_TRUE(o.ok()) << o.error().message;
  const PacEvolveOptions d;
  EXPECT_EQ(o->islands, 2);
  EXPECT_DOUBLE_EQ(o->momentum_beta, d.momentum_beta);
  EXPECT_DOUBLE_EQ(o->stagnation_threshold, d.stagnation_threshold);
  EXPECT_EQ(o->freeze_iterations, 15);
  EXPECT_EQ(o->max_ideas, 5);
  EXPECT_EQ(o->max_hypotheses, 20);
  EXPECT_DOUBLE_EQ(o->backtrack_power, 1.5);
  EXPECT_TRUE(o->hcm && o->mbb && o->ce);
  EXPECT_EQ(o->contrastive.exemplars, 2);
}

TEST(SearchConfigTest, OverridesAndAblations) {
  const ConfigSchema schema = Schema();
  Config config(schema);
  ASSERT_TRUE(config.SetOverride("pacevolve.momentum_beta=0.5").ok());
  ASSERT_TRUE(config.SetOverride("pacevolve.max_ideas=8").ok());
  ASSERT_TRUE(config.SetOverride("pacevolve.ce=false").ok());
  ASSERT_TRUE(config.SetOverride("contrastive.exemplars=3").ok());
  Result<PacEvolveOptions> o = PacEvolveOptionsFromConfig(config);
  ASSERT_TRUE(o.ok());
  EXPECT_DOUBLE_EQ(o->momentum_beta, 0.5);
  EXPECT_EQ(o->max_ideas, 8);
  EXPECT_FALSE(o->ce);
  EXPECT_TRUE(o->mbb);
  EXPECT_EQ(o->contrastive.exemplars, 3);
}

TEST(SearchConfigTest, OutOfRangeValuesAreBadInput) {
  const ConfigSchema schema = Schema();
  for (const char* assignment :
       {"pacevolve.momentum_beta=1", "pacevolve.momentum_beta=-0.1", "pacevolve.islands=0",
        "pacevolve.max_ideas=0", "pacevolve.max_hypotheses=0", "pacevolve.stagnation_threshold=-1",
        "pacevolve.freeze_iterations=-1", "pacevolve.failure_match_threshold=0",
        "pacevolve.backtrack_power=-2", "contrastive.temperature=-1"}) {
    Config config(schema);
    ASSERT_TRUE(config.SetOverride(assignment).ok()) << assignment;
    Result<PacEvolveOptions> o = PacEvolveOptionsFromConfig(config);
    ASSERT_FALSE(o.ok()) << assignment;
    EXPECT_EQ(o.error().kind, ErrorKind::kBadInput) << assignment;
  }
}

TEST(SearchConfigTest, TargetDefaultsToTheSpeedOfLightFloor) {
  PacEvolveOptions o;
  EXPECT_DOUBLE_EQ(ResolveTarget(o, 0.12), 0.12);
  EXPECT_DOUBLE_EQ(ResolveTarget(o, std::nullopt), 0.0);
  o.target_ms = 0.3;
  EXPECT_DOUBLE_EQ(ResolveTarget(o, 0.12), 0.3);
  o.target_ms = 0.0;  // an explicit 0 is a valid target
  EXPECT_DOUBLE_EQ(ResolveTarget(o, 0.12), 0.0);
}

}  // namespace
}  // namespace kforge::search::pacevolve
