#include "llm/llm_settings.h"

#include <fmt/format.h>

#include <cstdlib>

namespace kforge::llm {

namespace {

// Context windows of well-known models, in tokens.
std::map<std::string, int64_t> BuiltInContextWindows() {
  return {{"gpt-4o", 128000},  {"gpt-4.1", 1047576}, {"gpt-5", 400000},       {"o3", 200000},
          {"o4-mini", 200000}, {"claude-", 200000},  {"qwen2.5-coder", 32768}};
}

std::string EnvOr(const char* name) {
  const char* v = std::getenv(name);
  return v == nullptr ? "" : v;
}

}  // namespace

void RegisterLlmConfig(ConfigSchema& s) {
  auto add = [&](const char* key, ConfigValue value, const char* doc, bool secret = false) {
    s.Add(ConfigKey{key, std::move(value), doc, secret});
  };
  add("llm.spec", std::string(""), "Model spec used when --llm is not given");
  s.AddOpenTable("llm.stage.",
                 "llm.stage.<stage> = SPEC: the model for one stage (e.g. a cheaper one for "
                 "classify and summarize)");
  add("llm.seed", int64_t{0}, "Seed for choosing among weighted models and for retry jitter");
  add("llm.stream", true, "Stream replies (SSE); false asks for one JSON body");
  add("llm.max_output_tokens", int64_t{8192}, "Output tokens asked for per call");
  add("llm.temperature", -1.0, "Sampling temperature; negative leaves the provider's default");
  add("llm.context_window_tokens", int64_t{32768},
      "Context window assumed for models without a known or configured one");
  s.AddOpenTable("llm.context_window.",
                 "llm.context_window.<model> = TOKENS: context window of one model");
  add("llm.timeout.connect_ms", int64_t{10000}, "Deadline to open a connection");
  add("llm.timeout.first_token_ms", int64_t{120000},
      "Deadline from sending a streamed request to its first output");
  add("llm.timeout.idle_ms", int64_t{120000}, "Longest silence inside a stream");
  add("llm.timeout.total_ms", int64_t{900000}, "Deadline for one HTTP attempt");
  add("llm.retry.max_attempts", int64_t{6}, "HTTP attempts per call, the first included");
  add("llm.retry.base_delay_ms", int64_t{1000}, "Back-off before the first retry (doubles)");
  add("llm.retry.max_delay_ms", int64_t{60000}, "Cap of the exponential back-off");
  add("llm.retry.max_retry_after_ms", int64_t{300000}, "Cap on a server's Retry-After");
  add("llm.structured.max_attempts", int64_t{3},
      "Calls per structured-output request before a reply that fails its schema is final");
  add("llm.openai.base_url", std::string("https://api.openai.com/v1"),
      "Endpoint for openai: specs without @BASE_URL");
  add("llm.openai.api_key", std::string(""), "OpenAI key (default: $OPENAI_API_KEY)", true);
  add("llm.openai.max_concurrency", int64_t{8}, "Calls in flight per OpenAI-compatible endpoint");
  add("llm.openai.max_tokens_field", std::string("auto"),
      "auto | max_tokens | max_completion_tokens (auto: the latter for api.openai.com)");
  add("llm.anthropic.base_url", std::string("https://api.anthropic.com"),
      "Endpoint for anthropic: specs without @BASE_URL");
  add("llm.anthropic.api_key", std::string(""), "Anthropic key (default: $ANTHROPIC_API_KEY)",
      true);
  add("llm.anthropic.max_concurrency", int64_t{4}, "Calls in flight per Anthropic endpoint");
  add("llm.anthropic.version", std::string("2023-06-01"), "anthropic-version header");
  add("llm.budget.usd", 0.0, "Stop the run when LLM cost reaches this (USD; 0: no cap)");
  add("llm.budget.tokens", int64_t{0}, "Stop the run at this many tokens, in + out (0: no cap)");
  add("llm.budget.calls", int64_t{0}, "Stop the run after this many LLM calls (0: no cap)");
  add("llm.call_log", std::string(""),
      "JSONL file recording every LLM call (used where no store records them)");
  add("llm.replay.strict", true,
      "Replay fails on a request that was not recorded; false serves the stage's next call");
  s.AddOpenTable("prices.",
                 "prices.<model>.input_per_mtok / .output_per_mtok: USD per million tokens");
}

Result<LlmSettings> LlmSettings::FromConfig(const Config& c) {
  LlmSettings s;
  auto positive = [&](const char* key) -> Result<int64_t> {
    int64_t v = c.GetInt(key);
    if (v <= 0) return Error::BadInput(fmt::format("config key '{}' must be positive", key));
    return v;
  };
  auto non_negative = [&](const char* key) -> Result<int64_t> {
    int64_t v = c.GetInt(key);
    if (v < 0) return Error::BadInput(fmt::format("config key '{}' cannot be negative", key));
    return v;
  };
#define KFORGE_TRY_ASSIGN(target, expr)     \
  do {                                      \
    auto kforge_r = (expr);                 \
    if (!kforge_r) return kforge_r.error(); \
    target = kforge_r.value();              \
  } while (false)

  s.spec = c.GetString("llm.spec");
  for (const auto& [key, value] : c.Table("llm.stage.")) {
    const auto* spec = std::get_if<std::string>(&value);
    if (spec == nullptr) {
      return Error::BadInput(fmt::format("config key '{}' must be a model spec string", key));
    }
    s.stage_specs[key.substr(std::string("llm.stage.").size())] = *spec;
  }
  s.seed = static_cast<uint64_t>(c.GetInt("llm.seed"));
  s.stream = c.GetBool("llm.stream");
  KFORGE_TRY_ASSIGN(s.max_output_tokens, positive("llm.max_output_tokens"));
  if (double t = c.GetDouble("llm.temperature"); t >= 0) s.temperature = t;
  KFORGE_TRY_ASSIGN(s.default_context_window, positive("llm.context_window_tokens"));
  s.context_windows = BuiltInContextWindows();
  for (const auto& [key, value] : c.Table("llm.context_window.")) {
    const auto* tokens = std::get_if<int64_t>(&value);
    if (tokens == nullptr || *tokens <= 0) {
      return Error::BadInput(fmt::format("config key '{}' must be a positive integer", key));
    }
    s.context_windows[key.substr(std::string("llm.context_window.").size())] = *tokens;
  }
  KFORGE_TRY_ASSIGN(s.timeouts.connect_ms, non_negative("llm.timeout.connect_ms"));
  KFORGE_TRY_ASSIGN(s.timeouts.first_token_ms, non_negative("llm.timeout.first_token_ms"));
  KFORGE_TRY_ASSIGN(s.timeouts.idle_ms, non_negative("llm.timeout.idle_ms"));
  KFORGE_TRY_ASSIGN(s.timeouts.total_ms, non_negative("llm.timeout.total_ms"));
  int64_t attempts = 0;
  KFORGE_TRY_ASSIGN(attempts, positive("llm.retry.max_attempts"));
  s.retry.max_attempts = static_cast<int>(attempts);
  KFORGE_TRY_ASSIGN(s.retry.base_delay_ms, non_negative("llm.retry.base_delay_ms"));
  KFORGE_TRY_ASSIGN(s.retry.max_delay_ms, non_negative("llm.retry.max_delay_ms"));
  KFORGE_TRY_ASSIGN(s.retry.max_retry_after_ms, non_negative("llm.retry.max_retry_after_ms"));
  KFORGE_TRY_ASSIGN(attempts, positive("llm.structured.max_attempts"));
  s.structured_max_attempts = static_cast<int>(attempts);

  auto base_url = [&](const char* key) -> Result<std::string> {
    std::string url = c.GetString(key);
    while (!url.empty() && url.back() == '/') url.pop_back();
    if (url.rfind("http://", 0) != 0 && url.rfind("https://", 0) != 0) {
      return Error::BadInput(
          fmt::format("config key '{}' must be an http:// or https:// URL", key));
    }
    return url;
  };
  KFORGE_TRY_ASSIGN(s.openai.base_url, base_url("llm.openai.base_url"));
  s.openai.api_key = c.GetString("llm.openai.api_key");
  if (s.openai.api_key.empty()) s.openai.api_key = EnvOr("OPENAI_API_KEY");
  int64_t concurrency = 0;
  KFORGE_TRY_ASSIGN(concurrency, positive("llm.openai.max_concurrency"));
  s.openai.max_concurrency = static_cast<int>(concurrency);
  std::string field = c.GetString("llm.openai.max_tokens_field");
  if (field == "auto") {
    s.openai_max_tokens_field = MaxTokensField::kAuto;
  } else if (field == "max_tokens") {
    s.openai_max_tokens_field = MaxTokensField::kMaxTokens;
  } else if (field == "max_completion_tokens") {
    s.openai_max_tokens_field = MaxTokensField::kMaxCompletionTokens;
  } else {
    return Error::BadInput(
        fmt::format("config key 'llm.openai.max_tokens_field': '{}' is not auto, max_tokens or "
                    "max_completion_tokens",
                    field));
  }
  KFORGE_TRY_ASSIGN(s.anthropic.base_url, base_url("llm.anthropic.base_url"));
  s.anthropic.api_key = c.GetString("llm.anthropic.api_key");
  if (s.anthropic.api_key.empty()) s.anthropic.api_key = EnvOr("ANTHROPIC_API_KEY");
  KFORGE_TRY_ASSIGN(concurrency, positive("llm.anthropic.max_concurrency"));
  s.anthropic.max_concurrency = static_cast<int>(concurrency);
  s.anthropic_version = c.GetString("llm.anthropic.version");

  s.budget.max_usd = c.GetDouble("llm.budget.usd");
  if (s.budget.max_usd < 0) {
    return Error::BadInput("config key 'llm.budget.usd' cannot be negative");
  }
  KFORGE_TRY_ASSIGN(s.budget.max_tokens, non_negative("llm.budget.tokens"));
  KFORGE_TRY_ASSIGN(s.budget.max_calls, non_negative("llm.budget.calls"));
  KFORGE_TRY_ASSIGN(s.prices, PriceTable::FromConfig(c));
  s.call_log_path = c.GetString("llm.call_log");
  s.replay_strict = c.GetBool("llm.replay.strict");
#undef KFORGE_TRY_ASSIGN
  return s;
}

int64_t LlmSettings::ContextWindowFor(const std::string& model) const {
  if (auto it = context_windows.find(model); it != context_windows.end()) return it->second;
  int64_t best = default_context_window;
  size_t best_len = 0;
  for (const auto& [name, tokens] : context_windows) {
    if (name.size() > best_len && model.compare(0, name.size(), name) == 0) {
      best = tokens;
      best_len = name.size();
    }
  }
  return best;
}

}  // namespace kforge::llm
