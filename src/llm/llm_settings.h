// The llm module's config keys (RegisterLlmConfig) and their values read
// into one struct (LlmSettings::FromConfig), so nothing below reads Config.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "common/config.h"
#include "common/result.h"
#include "llm/accounting.h"
#include "llm/http_transport.h"
#include "llm/openai_wire.h"
#include "llm/retry_policy.h"

namespace kforge::llm {

void RegisterLlmConfig(ConfigSchema& schema);

struct ProviderSettings {
  std::string base_url;  // default endpoint when a spec names none
  std::string api_key;   // from config, else the provider's environment variable
  int max_concurrency = 8;
};

struct LlmSettings {
  std::string spec;                                // llm.spec: used when --llm is not given
  std::map<std::string, std::string> stage_specs;  // llm.stage.<stage>
  uint64_t seed = 0;
  bool stream = true;
  int64_t max_output_tokens = 8192;
  std::optional<double> temperature;
  int64_t default_context_window = 32768;
  std::map<std::string, int64_t>
      context_windows;  // built-ins overlaid with llm.context_window.<model>
  HttpTimeouts timeouts{10000, 120000, 120000, 900000};
  RetryPolicy retry;
  int structured_max_attempts = 3;
  ProviderSettings openai{"https://api.openai.com/v1", "", 8};
  ProviderSettings anthropic{"https://api.anthropic.com", "", 4};
  MaxTokensField openai_max_tokens_field = MaxTokensField::kAuto;
  std::string anthropic_version = "2023-06-01";
  BudgetLimits budget;
  PriceTable prices = PriceTable::BuiltIn();
  std::string call_log_path;  // llm.call_log: a JSONL call log; empty for none
  bool replay_strict = true;
  // Not a config key: set by callers whose prompts differ on every run (the
  // optimize loop), so replay serves each stage's answers in recorded order.
  bool replay_in_order = false;

  // kBadInput for out-of-range values or malformed open-table entries.
  static Result<LlmSettings> FromConfig(const Config& config);
  // Exact entry, else the longest prefix entry, else the default.
  int64_t ContextWindowFor(const std::string& model) const;
};

}  // namespace kforge::llm
