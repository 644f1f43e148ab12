// Model specs, as the CLI and config give them (see CONTRACT.md):
//   openai:MODEL[@BASE_URL]      any OpenAI-compatible endpoint
//   anthropic:MODEL[@BASE_URL]
//   replay:RUN_ID                the recorded calls of an earlier run
// comma separated, each optionally weighted: "openai:a*0.8,anthropic:b*0.2".
#pragma once

#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "llm/llm_client.h"

namespace kforge::llm {

enum class Provider { kOpenAi, kAnthropic, kReplay };
std::string_view ProviderName(Provider provider);

struct ModelSpec {
  Provider provider = Provider::kOpenAi;
  std::string model;     // openai / anthropic
  std::string base_url;  // empty: the provider's configured default; no trailing '/'
  std::string run_id;    // replay
  double weight = 1.0;

  // The spec without its weight, e.g. "openai:qwen2.5-coder@http://localhost:8000/v1".
  std::string ToString() const;
};

// kBadInput naming the offending item when a spec is malformed. A base URL
// starts at the first "@http://" or "@https://", so model names may contain
// '@' and ':' (Ollama's "qwen2.5-coder:7b").
Result<ModelSpec> ParseModelSpec(std::string_view text);
Result<std::vector<ModelSpec>> ParseModelSpecs(std::string_view text);

// Several clients, one chosen per call with probability proportional to its
// weight, from a seeded generator (a seeded run picks the same sequence).
class EnsembleClient : public LlmClient {
 public:
  struct Member {
    std::unique_ptr<LlmClient> client;
    double weight = 1.0;
  };
  EnsembleClient(std::vector<Member> members, uint64_t seed);

  LlmResult<LlmResponse> Complete(const LlmRequest& request,
                                  const TextDeltaFn& on_text = {}) override;
  std::string spec() const override;
  std::string model() const override;
  LlmClient* Pick() override;
  size_t size() const { return members_.size(); }

 private:
  std::vector<Member> members_;
  std::discrete_distribution<size_t> choose_;
  std::mutex mu_;
  std::mt19937_64 rng_;
};

}  // namespace kforge::llm
