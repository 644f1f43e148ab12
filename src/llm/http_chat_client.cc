#include "llm/http_chat_client.h"

#include <fmt/format.h>

#include <chrono>
#include <thread>

namespace kforge::llm {

namespace {

using Clock = std::chrono::steady_clock;

double MsSince(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

// Wraps the wire's assembler to time the first token.
class TimedSink : public StreamSink {
 public:
  TimedSink(StreamAssembler* inner, Clock::time_point start) : inner_(inner), start_(start) {}
  bool Consume(std::string_view bytes) override {
    bool more = inner_->Consume(bytes);
    if (first_token_ms_ == 0 && inner_->produced_output()) first_token_ms_ = MsSince(start_);
    return more;
  }
  bool produced_output() const override { return inner_->produced_output(); }
  bool Accepts(const HttpResponse& head) override { return inner_->Accepts(head); }
  double first_token_ms() const { return first_token_ms_; }

 private:
  StreamAssembler* inner_;
  Clock::time_point start_;
  double first_token_ms_ = 0;
};

}  // namespace

HttpChatClient::HttpChatClient(std::string spec, std::unique_ptr<WireProtocol> wire,
                               std::shared_ptr<HttpTransport> transport,
                               std::shared_ptr<ConcurrencyLimit> limit, HttpClientOptions options)
    : spec_(std::move(spec)),
      wire_(std::move(wire)),
      transport_(std::move(transport)),
      limit_(std::move(limit)),
      options_(std::move(options)),
      rng_(options_.seed) {
  if (!options_.sleep) {
    options_.sleep = [](int64_t ms) { std::this_thread::sleep_for(std::chrono::milliseconds(ms)); };
  }
  if (!limit_) limit_ = std::make_shared<ConcurrencyLimit>(1 << 20);
}

LlmError HttpChatClient::StatusError(const HttpResponse& response) const {
  LlmError e;
  e.http_status = response.status;
  std::string detail = ErrorBodyMessage(response.body);
  if (response.status == 401 || response.status == 403) {
    e.kind = LlmErrorKind::kAuth;
    e.message = fmt::format("{} refused the credentials (HTTP {}): {}", wire_->provider(),
                            response.status, detail);
  } else if (response.status == 429) {
    e.kind = LlmErrorKind::kRateLimited;
    e.message = fmt::format("rate limited (HTTP 429): {}", detail);
  } else if (IsRetryableStatus(response.status)) {
    e.kind = LlmErrorKind::kServer;
    e.message = fmt::format("server error (HTTP {}): {}", response.status, detail);
  } else {
    e.kind = LlmErrorKind::kBadRequest;
    e.message = fmt::format("request rejected (HTTP {}): {}", response.status, detail);
  }
  e.retry_after_ms = RetryAfterMs(response);
  return e;
}

LlmResult<LlmResponse> HttpChatClient::Attempt(const LlmRequest& request, const HttpRequest& http,
                                               const TextDeltaFn& on_text, double* first_token_ms) {
  ConcurrencyLimit::Permit permit = limit_->Acquire();
  auto start = Clock::now();
  if (!options_.stream) {
    auto sent = transport_->Send(http, nullptr);
    if (!sent) return sent.error();
    if (sent->status < 200 || sent->status >= 300) return StatusError(*sent);
    return wire_->ParseResponse(request, sent->body);
  }
  std::unique_ptr<StreamAssembler> assembler = wire_->NewStream(request, on_text);
  TimedSink sink(assembler.get(), start);
  auto sent = transport_->Send(http, &sink);
  *first_token_ms = sink.first_token_ms();
  if (!sent) return sent.error();
  if (sent->status < 200 || sent->status >= 300) return StatusError(*sent);
  // Some servers ignore "stream": true, or answer an error with 200 JSON.
  if (!sent->streamed) return wire_->ParseResponse(request, sent->body);
  return assembler->Finish();
}

LlmResult<LlmResponse> HttpChatClient::Complete(const LlmRequest& request,
                                                const TextDeltaFn& on_text) {
  auto built = wire_->BuildRequest(request, options_.stream);
  if (!built) return built.error();
  HttpRequest& http = built.value();
  http.timeouts = options_.timeouts;
  // Without a stream nothing arrives before the whole answer: only the
  // connect and total deadlines mean anything then.
  if (!options_.stream) {
    http.timeouts.first_token_ms = 0;
    http.timeouts.idle_ms = 0;
  }

  auto start = Clock::now();
  int max_attempts = std::max(1, options_.retry.max_attempts);
  for (int attempt = 1;; ++attempt) {
    double first_token_ms = 0;
    auto result = Attempt(request, http, on_text, &first_token_ms);
    if (result) {
      LlmResponse& r = result.value();
      r.latency_ms = MsSince(start);
      r.first_token_ms = first_token_ms;
      r.attempts = attempt;
      if (r.model.empty()) r.model = model();
      return result;
    }
    LlmError error = result.error();
    error.attempts = attempt;
    if (!error.retryable() || attempt >= max_attempts) {
      if (attempt > 1) error.message += fmt::format(" (after {} attempts)", attempt);
      return error;
    }
    int64_t delay;
    {
      std::lock_guard<std::mutex> lock(rng_mu_);
      delay = options_.retry.DelayMs(attempt + 1, error.retry_after_ms, rng_);
    }
    options_.sleep(delay);
  }
}

}  // namespace kforge::llm
