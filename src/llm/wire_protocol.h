// A provider's wire format: how an LlmRequest becomes an HTTP request and how
// the reply (a JSON body or an SSE stream) becomes an LlmResponse. Pure
// translation, no I/O, so each format is tested on captured bodies.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "llm/http_transport.h"
#include "llm/llm_error.h"
#include "llm/types.h"

namespace kforge::llm {

struct Endpoint {
  std::string model;
  std::string base_url;  // without a trailing slash
  std::string api_key;   // empty: no key sent (local servers)
  int64_t default_max_output_tokens = 4096;
};

// Collects one streamed reply; Finish() says whether it was whole.
class StreamAssembler : public StreamSink {
 public:
  // Only an event stream (or a body that does not say what it is).
  bool Accepts(const HttpResponse& head) override;
  // The response, or kTruncatedStream when the end marker never came,
  // kServer for an error event, kMalformedResponse for an unreadable event.
  virtual LlmResult<LlmResponse> Finish() = 0;
};

class WireProtocol {
 public:
  virtual ~WireProtocol() = default;
  virtual std::string_view provider() const = 0;
  virtual const Endpoint& endpoint() const = 0;
  // kBadSpec when the request cannot be expressed in this format.
  virtual LlmResult<HttpRequest> BuildRequest(const LlmRequest& request, bool stream) const = 0;
  virtual LlmResult<LlmResponse> ParseResponse(const LlmRequest& request,
                                               std::string_view body) const = 0;
  virtual std::unique_ptr<StreamAssembler> NewStream(const LlmRequest& request,
                                                     TextDeltaFn on_text) const = 0;
};

// The human-readable message of an error body in the shapes servers use:
// {"error": {"message": ...}} (OpenAI, Anthropic), {"error": "..."} (Ollama),
// {"message": ...} (vLLM), {"detail": ...} (FastAPI); else the body itself,
// shortened.
std::string ErrorBodyMessage(std::string_view body);

}  // namespace kforge::llm
