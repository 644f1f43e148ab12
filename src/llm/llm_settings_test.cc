#include "llm/llm_settings.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <optional>
#include <string>

namespace kforge::llm {
namespace {

class LlmSettingsTest : public ::testing::Test {
 protected:
  LlmSettingsTest() : config_(schema_) { RegisterLlmConfig(schema_); }
  void SetUp() override {
    saved_openai_ = Env("OPENAI_API_KEY");
    saved_anthropic_ = Env("ANTHROPIC_API_KEY");
    ::unsetenv("OPENAI_API_KEY");
    ::unsetenv("ANTHROPIC_API_KEY");
  }
  void TearDown() override {
    Restore("OPENAI_API_KEY", saved_openai_);
    Restore("ANTHROPIC_API_KEY", saved_anthropic_);
  }
  static std::optional<std::string> Env(const char* name) {
    const char* v = std::getenv(name);
    return v ? std::optional<std::string>(v) : std::nullopt;
  }
  static void Restore(const char* name, const std::optional<std::string>& v) {
    if (v) {
      ::setenv(name, v->c_str(), 1);
    } else {
      ::unsetenv(name);
    }
  }

  ConfigSchema schema_;
  Config config_;
  std::optional<std::string> saved_openai_, saved_anthropic_;
};

TEST_F(LlmSettingsTest, DefaultsAreUsable) {
  auto s = LlmSettings::FromConfig(config_);
  ASSERT_TRUE(s.ok()) << s.error().message;
  EXPECT_TRUE(s->stream);
  EXPECT_FALSE(s->temperature.has_value());
  EXPECT_EQ(s->openai.base_url, "https://api.openai.com/v1");
  EXPECT_EQ(s->anthropic.base_url, "https://api.anthropic.com");
  EXPECT_EQ(s->retry.max_attempts, 6);
  EXPECT_EQ(s->timeouts.connect_ms, 10000);
  EXPECT_EQ(s->budget.max_calls, 0);
  EXPECT_EQ(s->ContextWindowFor("gpt-4o-2024-08-06"), 128000);
  EXPECT_EQ(s->ContextWindowFor("claude-sonnet-4-20250514"), 200000);
  EXPECT_EQ(s->ContextWindowFor("some-local-model"), 32768);
  EXPECT_TRUE(s->prices.Find("gpt-4o").has_value());
}

TEST_F(LlmSettingsTest, ReadsEveryKindOfKeyFromToml) {
  ASSERT_TRUE(config_
                  .LoadTomlString(R"(
[llm]
spec = "openai:qwen2.5-coder@http://localhost:8000/v1"
seed = 7
stream = false
max_output_tokens = 2048
temperature = 0
context_window_tokens = 16384
[llm.stage]
classify = "openai:gpt-4o-mini"
[llm.context_window]
"qwen2.5-coder" = 65536
[llm.timeout]
connect_ms = 1500
first_token_ms = 30000
[llm.retry]
max_attempts = 2
base_delay_ms = 250
[llm.openai]
max_concurrency = 3
max_tokens_field = "max_completion_tokens"
[llm.budget]
usd = 5
tokens = 1000000
calls = 200
[prices.qwen2.5-coder]
input_per_mtok = 0.1
output_per_mtok = 0.2
)",
                                  "kforge.toml")
                  .ok());
  auto s = LlmSettings::FromConfig(config_);
  ASSERT_TRUE(s.ok()) << s.error().message;
  EXPECT_EQ(s->spec, "openai:qwen2.5-coder@http://localhost:8000/v1");
  EXPECT_EQ(s->seed, 7u);
  EXPECT_FALSE(s->stream);
  EXPECT_EQ(s->max_output_tokens, 2048);
  ASSERT_TRUE(s->temperature.has_value());
  EXPECT_DOUBLE_EQ(*s->temperature, 0.0);
  EXPECT_EQ(s->stage_specs.at("classify"), "openai:gpt-4o-mini");
  EXPECT_EQ(s->ContextWindowFor("qwen2.5-coder"), 65536);
  EXPECT_EQ(s->ContextWindowFor("other"), 16384);
  EXPECT_EQ(s->timeouts.connect_ms, 1500);
  EXPECT_EQ(s->timeouts.first_token_ms, 30000);
  EXPECT_EQ(s->retry.max_attempts, 2);
  EXPECT_EQ(s->retry.base_delay_ms, 250);
  EXPECT_EQ(s->openai.max_concurrency, 3);
  EXPECT_EQ(s->openai_max_tokens_field, MaxTokensField::kMaxCompletionTokens);
  EXPECT_DOUBLE_EQ(s->budget.max_usd, 5.0);
  EXPECT_EQ(s->budget.max_tokens, 1000000);
  EXPECT_EQ(s->budget.max_calls, 200);
  EXPECT_DOUBLE_EQ(s->prices.Find("qwen2.5-coder")->output_per_mtok, 0.2);
}

TEST_F(LlmSettingsTest, RefusesBadValuesAndUnknownKeys) {
  auto refused = [&](const std::string& assignment) {
    Config c(schema_);
    Status set = c.SetOverride(assignment);
    if (!set.ok()) return true;
    return !LlmSettings::FromConfig(c).ok();
  };
  EXPECT_TRUE(refused("llm.retry.max_attempts=0"));
  EXPECT_TRUE(refused("llm.timeout.total_ms=-1"));
  EXPECT_TRUE(refused("llm.openai.max_tokens_field=max"));
  EXPECT_TRUE(refused("llm.openai.base_url=ftp://host"));
  EXPECT_TRUE(refused("llm.context_window.m=big"));
  EXPECT_TRUE(refused("llm.budget.usd=-1"));
  EXPECT_TRUE(refused("llm.tiemout.connect_ms=5"));  // a typo is an error, not a no-op
  EXPECT_TRUE(refused("prices.m.input=1"));
  EXPECT_FALSE(refused("llm.budget.usd=2.5"));
}

TEST_F(LlmSettingsTest, KeysComeFromConfigOrEnvironmentAndAreMasked) {
  ::setenv("OPENAI_API_KEY", "sk-from-env", 1);
  auto from_env = LlmSettings::FromConfig(config_);
  ASSERT_TRUE(from_env.ok());
  EXPECT_EQ(from_env->openai.api_key, "sk-from-env");
  EXPECT_EQ(from_env->anthropic.api_key, "");
  ASSERT_TRUE(config_.SetOverride("llm.openai.api_key=sk-from-config").ok());
  auto from_config = LlmSettings::FromConfig(config_);
  EXPECT_EQ(from_config->openai.api_key, "sk-from-config");
  for (const auto& [key, value] : config_.EffectiveListing()) {
    EXPECT_EQ(value.find("sk-from"), std::string::npos) << key;
    if (key == "llm.openai.api_key") {
      EXPECT_EQ(value, "****");
    }
  }
}

}  // namespace
}  // namespace kforge::llm
