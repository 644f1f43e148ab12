#include "llm/client_factory.h"

#include <fmt/format.h>

#include "llm/anthropic_wire.h"
#include "llm/http_chat_client.h"
#include "llm/openai_wire.h"
#include "llm/replay_client.h"

namespace kforge::llm {

ClientFactory::ClientFactory(LlmSettings settings, std::shared_ptr<HttpTransport> transport,
                             LlmCallLog* replay_source)
    : settings_(std::move(settings)),
      transport_(std::move(transport)),
      replay_source_(replay_source) {
  if (!transport_) transport_ = std::make_shared<CurlTransport>();
}

std::shared_ptr<ConcurrencyLimit> ClientFactory::LimitFor(Provider provider,
                                                          const std::string& base_url) {
  std::lock_guard<std::mutex> lock(mu_);
  std::string key = fmt::format("{}@{}", ProviderName(provider), base_url);
  auto& limit = limits_[key];
  if (!limit) {
    int n = provider == Provider::kAnthropic ? settings_.anthropic.max_concurrency
                                             : settings_.openai.max_concurrency;
    limit = std::make_shared<ConcurrencyLimit>(n);
  }
  return limit;
}

LlmResult<std::unique_ptr<LlmClient>> ClientFactory::MakeOne(const ModelSpec& spec) {
  if (spec.provider == Provider::kReplay) {
    if (replay_source_ == nullptr) {
      return LlmError::Make(LlmErrorKind::kBadSpec,
                            fmt::format("'{}': no call log to replay from (set llm.call_log or "
                                        "use a store)",
                                        spec.ToString()));
    }
    auto records = replay_source_->LoadRun(spec.run_id);
    if (!records) {
      return LlmError::Make(LlmErrorKind::kBadSpec,
                            fmt::format("'{}': {}", spec.ToString(), records.error().message));
    }
    if (records->empty()) {
      return LlmError::Make(
          LlmErrorKind::kBadSpec,
          fmt::format("'{}': run {} has no recorded LLM calls", spec.ToString(), spec.run_id));
    }
    return std::unique_ptr<LlmClient>(
        std::make_unique<ReplayClient>(spec.run_id, std::move(records).value(),
                                       settings_.replay_strict, settings_.replay_in_order));
  }

  bool anthropic = spec.provider == Provider::kAnthropic;
  const ProviderSettings& provider = anthropic ? settings_.anthropic : settings_.openai;
  Endpoint endpoint;
  endpoint.model = spec.model;
  endpoint.base_url = spec.base_url.empty() ? provider.base_url : spec.base_url;
  endpoint.api_key = provider.api_key;
  endpoint.default_max_output_tokens = settings_.max_output_tokens;
  // Hosted APIs need a key; a local server given by URL usually does not.
  bool hosted = endpoint.base_url.find(anthropic ? "api.anthropic.com" : "api.openai.com") !=
                std::string::npos;
  if (hosted && endpoint.api_key.empty()) {
    return LlmError::Make(
        LlmErrorKind::kAuth,
        fmt::format("'{}' needs an API key: set {} or the config key llm.{}.api_key",
                    spec.ToString(), anthropic ? "ANTHROPIC_API_KEY" : "OPENAI_API_KEY",
                    anthropic ? "anthropic" : "openai"));
  }
  std::unique_ptr<WireProtocol> wire;
  if (anthropic) {
    wire = std::make_unique<AnthropicWire>(endpoint, settings_.anthropic_version);
  } else {
    wire = std::make_unique<OpenAiWire>(endpoint, settings_.openai_max_tokens_field);
  }
  HttpClientOptions options;
  options.stream = settings_.stream;
  options.timeouts = settings_.timeouts;
  options.retry = settings_.retry;
  {
    std::lock_guard<std::mutex> lock(mu_);
    options.seed = settings_.seed * 1000003u + ++clients_made_;
  }
  std::string spec_text = spec.ToString();
  if (spec.base_url.empty()) spec_text += "@" + endpoint.base_url;
  return std::unique_ptr<LlmClient>(std::make_unique<HttpChatClient>(
      spec_text, std::move(wire), transport_, LimitFor(spec.provider, endpoint.base_url),
      std::move(options)));
}

LlmResult<std::unique_ptr<LlmClient>> ClientFactory::Make(const std::string& spec_text) {
  auto specs = ParseModelSpecs(spec_text);
  if (!specs) return LlmError::Make(LlmErrorKind::kBadSpec, specs.error().message);
  if (specs->size() == 1) return MakeOne(specs->front());
  std::vector<EnsembleClient::Member> members;
  for (const ModelSpec& spec : *specs) {
    auto client = MakeOne(spec);
    if (!client) return client.error();
    members.push_back({std::move(client).value(), spec.weight});
  }
  uint64_t seed;
  {
    std::lock_guard<std::mutex> lock(mu_);
    seed = settings_.seed * 1000003u + ++clients_made_;
  }
  return std::unique_ptr<LlmClient>(std::make_unique<EnsembleClient>(std::move(members), seed));
}

}  // namespace kforge::llm
