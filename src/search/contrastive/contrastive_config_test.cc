#include "search/contrastive/contrastive_config.h"

#include <gtest/gtest.h>

namespace kforge::search {
namespace {

TEST(ContrastiveConfigTest, RegistersKeysWithDefaults) {
  ConfigSchema schema;
  RegisterContrastiveConfig(schema);
  ASSERT_NE(schema.Find("contrastive.exemplars"), nullptr);
  ASSERT_NE(schema.Find("contrastive.temperature"), nullptr);
  ASSERT_NE(schema.Find("contrastive.bucket_width"), nullptr);
  ASSERT_NE(schema.Find("contrastive.score"), nullptr);
  Config config(schema);
  Result<ContrastiveOptions> o = ContrastiveOptionsFromConfig(config);
  ASSERT_TRUE(o.ok()) << o.error().message;
  EXPECT_EQ(o->exemplars, 2);  // CUDA-L1's N
  EXPECT_DOUBLE_EQ(o->temperature, 0.5);
  EXPECT_EQ(o->score, ScoreKind::kSpeedup);
}

TEST(ContrastiveConfigTest, OverridesAndValidation) {
  ConfigSchema schema;
  RegisterContrastiveConfig(schema);
  Config config(schema);
  ASSERT_TRUE(config.SetOverride("contrastive.exemplars=4").ok());
  ASSERT_TRUE(config.SetOverride("contrastive.score=runtime").ok());
  Result<ContrastiveOptions> o = ContrastiveOptionsFromConfig(config);
  ASSERT_TRUE(o.ok());
  EXPECT_EQ(o->exemplars, 4);
  EXPECT_EQ(o->score, ScoreKind::kRuntime);

  ASSERT_TRUE(config.SetOverride("contrastive.temperature=0").ok());
  Result<ContrastiveOptions> bad = ContrastiveOptionsFromConfig(config);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().kind, ErrorKind::kBadInput);
  EXPECT_NE(bad.error().message.find("contrastive.temperature"), std::string::npos);

  ASSERT_TRUE(config.SetOverride("contrastive.temperature=1").ok());
  ASSERT_TRUE(config.SetOverride("contrastive.exemplars=0").ok());
  EXPECT_FALSE(ContrastiveOptionsFromConfig(config).ok());
  ASSERT_TRUE(config.SetOverride("contrastive.exemplars=2").ok());
  ASSERT_TRUE(config.SetOverride("contrastive.score=throughput").ok());
  EXPECT_FALSE(ContrastiveOptionsFromConfig(config).ok());
}

}  // namespace
}  // namespace kforge::search
