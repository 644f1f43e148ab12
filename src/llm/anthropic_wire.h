// Anthropic messages (POST {base}/v1/messages). Structured output is asked
// for as a forced tool whose input_schema is the output schema; the tool's
// input becomes the response text.
#pragma once

#include <string>

#include "llm/wire_protocol.h"

namespace kforge::llm {

class AnthropicWire : public WireProtocol {
 public:
  AnthropicWire(Endpoint endpoint, std::string api_version = "2023-06-01");

  std::string_view provider() const override { return "anthropic"; }
  const Endpoint& endpoint() const override { return endpoint_; }
  LlmResult<HttpRequest> BuildRequest(const LlmRequest& request, bool stream) const override;
  LlmResult<LlmResponse> ParseResponse(const LlmRequest& request,
                                       std::string_view body) const override;
  std::unique_ptr<StreamAssembler> NewStream(const LlmRequest& request,
                                             TextDeltaFn on_text) const override;

 private:
  Endpoint endpoint_;
  std::string api_version_;
};

// end_turn and stop_sequence → "stop", max_tokens → "length", tool_use → "tool_calls".
std::string NormalizeAnthropicStopReason(std::string_view reason);

}  // namespace kforge::llm
