// Builds LlmClients from spec text: one HttpChatClient per provider spec, a
// ReplayClient for replay:RUN_ID, an EnsembleClient when several are given.
// Clients made by one factory share one concurrency limit per endpoint.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "llm/call_log.h"
#include "llm/concurrency_limit.h"
#include "llm/http_transport.h"
#include "llm/llm_client.h"
#include "llm/llm_settings.h"
#include "llm/model_spec.h"

namespace kforge::llm {

class ClientFactory {
 public:
  // `replay_source` is where replay:RUN_ID finds its run (may be null: then
  // replay specs are refused). `transport` null: a CurlTransport.
  ClientFactory(LlmSettings settings, std::shared_ptr<HttpTransport> transport,
                LlmCallLog* replay_source);

  // kBadSpec for a malformed spec, kAuth for a hosted provider without a key.
  LlmResult<std::unique_ptr<LlmClient>> Make(const std::string& spec_text);
  LlmResult<std::unique_ptr<LlmClient>> MakeOne(const ModelSpec& spec);

  const LlmSettings& settings() const { return settings_; }
  // The limit shared by every client of one endpoint.
  std::shared_ptr<ConcurrencyLimit> LimitFor(Provider provider, const std::string& base_url);

 private:
  LlmSettings settings_;
  std::shared_ptr<HttpTransport> transport_;
  LlmCallLog* replay_source_;
  std::mutex mu_;
  std::map<std::string, std::shared_ptr<ConcurrencyLimit>> limits_;
  uint64_t clients_made_ = 0;  // varies the jitter seed per client
};

}  // namespace kforge::llm
