// OpenAI chat completions (POST {base}/chat/completions), the format every
// OpenAI-compatible server speaks: vLLM, SGLang, Ollama, llama.cpp server.
#pragma once

#include "llm/wire_protocol.h"

namespace kforge::llm {

enum class MaxTokensField {
  kAuto,                 // max_completion_tokens for api.openai.com, max_tokens elsewhere
  kMaxTokens,            // what local servers understand
  kMaxCompletionTokens,  // what OpenAI's reasoning models require
};

class OpenAiWire : public WireProtocol {
 public:
  OpenAiWire(Endpoint endpoint, MaxTokensField field = MaxTokensField::kAuto);

  std::string_view provider() const override { return "openai"; }
  const Endpoint& endpoint() const override { return endpoint_; }
  LlmResult<HttpRequest> BuildRequest(const LlmRequest& request, bool stream) const override;
  LlmResult<LlmResponse> ParseResponse(const LlmRequest& request,
                                       std::string_view body) const override;
  std::unique_ptr<StreamAssembler> NewStream(const LlmRequest& request,
                                             TextDeltaFn on_text) const override;

 private:
  Endpoint endpoint_;
  MaxTokensField field_;
};

// "stop", "length", "tool_calls" pass through; "function_call" becomes "tool_calls".
std::string NormalizeOpenAiFinishReason(std::string_view reason);

}  // namespace kforge::llm
