// LlmClient: one model behind one interface. Implementations: HttpChatClient
// (OpenAI-compatible or Anthropic over HTTP), ReplayClient (a recorded run),
// EnsembleClient (several clients sampled by weight).
#pragma once

#include <string>

#include "llm/llm_error.h"
#include "llm/types.h"

namespace kforge::llm {

class LlmClient {
 public:
  virtual ~LlmClient() = default;
  // One call. Thread-safe: a run makes many calls at once. Retries of
  // transient failures happen inside; the error, if any, is final.
  virtual LlmResult<LlmResponse> Complete(const LlmRequest& request,
                                          const TextDeltaFn& on_text = {}) = 0;
  // The spec this client was made from ("openai:gpt-4o@http://...").
  virtual std::string spec() const = 0;
  // The model that will answer `request` (for pricing and context windows).
  // Ensembles choose per call, so they answer for a call made through Pick().
  virtual std::string model() const = 0;
  // Clients that route to others (ensembles) return the one the next call
  // uses; every other client returns itself.
  virtual LlmClient* Pick() { return this; }
  // Whether calls cost money (a replay costs nothing).
  virtual bool billable() const { return true; }
};

}  // namespace kforge::llm
