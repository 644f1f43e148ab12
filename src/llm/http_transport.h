// The HTTP layer under the LLM clients. An interface so tests (and future
// transports) can stand in for libcurl; CurlTransport is the real one.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "llm/llm_error.h"

namespace kforge::llm {

// Every deadline is in milliseconds; 0 disables it.
struct HttpTimeouts {
  int64_t connect_ms = 0;
  // Until the body shows model output: the first body byte, or for a stream
  // the moment its sink reports output (servers send preambles and pings
  // before the first token).
  int64_t first_token_ms = 0;
  // Longest silence between two received pieces once output has started.
  int64_t idle_ms = 0;
  int64_t total_ms = 0;
};

struct HttpRequest {
  std::string method = "POST";
  std::string url;
  std::vector<std::pair<std::string, std::string>> headers;  // secrets allowed: never logged
  std::string body;
  HttpTimeouts timeouts;
};

struct HttpResponse {
  int status = 0;
  std::map<std::string, std::string> headers;  // names lower-cased; last value wins
  // The whole body, unless a StreamSink accepted it.
  std::string body;
  bool streamed = false;  // the body went to the sink

  std::optional<std::string> Header(std::string_view lower_name) const;
};

// Receives a 2xx body as it arrives.
class StreamSink {
 public:
  virtual ~StreamSink() = default;
  // Asked once, when a 2xx body starts, with the status and headers: false
  // leaves the body in HttpResponse::body (a server that answered a stream
  // request with plain JSON).
  virtual bool Accepts(const HttpResponse& head) { return true; }
  // One piece of the body; false stops the transfer (the transport then
  // returns the response so far, and the sink knows why it stopped).
  virtual bool Consume(std::string_view bytes) = 0;
  // True once the body carried model output; ends the first-token deadline.
  virtual bool produced_output() const = 0;
};

class HttpTransport {
 public:
  virtual ~HttpTransport() = default;
  // Sends one request. Network failures and deadlines are errors (kNetwork,
  // kTimeout, kTls, kBadSpec for an unusable URL); any HTTP status is a
  // response. With a sink, a 2xx body it accepts goes to it; any other body
  // into `body`.
  virtual LlmResult<HttpResponse> Send(const HttpRequest& request, StreamSink* sink) = 0;
};

// libcurl, with TLS verification on and the usual proxy variables honoured
// (libcurl's defaults, never changed here). Thread-safe; idle handles are
// kept for connection reuse.
class CurlTransport : public HttpTransport {
 public:
  CurlTransport();
  ~CurlTransport() override;
  CurlTransport(const CurlTransport&) = delete;
  CurlTransport& operator=(const CurlTransport&) = delete;

  LlmResult<HttpResponse> Send(const HttpRequest& request, StreamSink* sink) override;

 private:
  struct HandlePool;
  std::unique_ptr<HandlePool> pool_;
};

}  // namespace kforge::llm
