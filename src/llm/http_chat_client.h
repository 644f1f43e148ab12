// An LlmClient that talks to a model server over HTTP in one wire format
// (OpenAI-compatible or Anthropic). It owns the resilience rules: retries of
// 429, 5xx, timeouts, resets, malformed bodies and truncated streams with
// back-off (or the server's Retry-After); a concurrency limit shared with
// every client of the same provider; separate connect, first-token, idle and
// total deadlines.
#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <random>
#include <string>

#include "llm/concurrency_limit.h"
#include "llm/http_transport.h"
#include "llm/llm_client.h"
#include "llm/retry_policy.h"
#include "llm/wire_protocol.h"

namespace kforge::llm {

struct HttpClientOptions {
  bool stream = true;
  HttpTimeouts timeouts;  // first_token_ms applies to streams only
  RetryPolicy retry;
  uint64_t seed = 0;  // jitter RNG
  // How to wait between attempts; tests may count instead of sleeping.
  std::function<void(int64_t ms)> sleep;
};

class HttpChatClient : public LlmClient {
 public:
  HttpChatClient(std::string spec, std::unique_ptr<WireProtocol> wire,
                 std::shared_ptr<HttpTransport> transport, std::shared_ptr<ConcurrencyLimit> limit,
                 HttpClientOptions options);

  LlmResult<LlmResponse> Complete(const LlmRequest& request,
                                  const TextDeltaFn& on_text = {}) override;
  std::string spec() const override { return spec_; }
  std::string model() const override { return wire_->endpoint().model; }

 private:
  LlmResult<LlmResponse> Attempt(const LlmRequest& request, const HttpRequest& http,
                                 const TextDeltaFn& on_text, double* first_token_ms);
  LlmError StatusError(const HttpResponse& response) const;

  std::string spec_;
  std::unique_ptr<WireProtocol> wire_;
  std::shared_ptr<HttpTransport> transport_;
  std::shared_ptr<ConcurrencyLimit> limit_;
  HttpClientOptions options_;
  std::mutex rng_mu_;
  std::mt19937_64 rng_;
};

}  // namespace kforge::llm
