// Errors of the LLM layer. They are values like every expected error in
// kforge, but carry more than common's Error: whether a retry can help, what
// the server asked us to wait, and kinds the caller must tell apart (a spent
// budget stops a run cleanly and leaves it resumable; a replay divergence
// means the recorded run no longer matches the code).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

#include "common/result.h"

namespace kforge::llm {

enum class LlmErrorKind {
  kBadSpec,            // malformed model spec, base URL or request (user error)
  kAuth,               // 401/403 or no key where one is needed
  kBadRequest,         // any other 4xx: the server rejected the request
  kRateLimited,        // 429 (retryable)
  kServer,             // 5xx or an error event inside a stream (retryable)
  kNetwork,            // connect failure, reset, empty reply (retryable)
  kTls,                // certificate or handshake failure (not retried)
  kTimeout,            // connect, first-token, idle or total deadline (retryable)
  kMalformedResponse,  // a body or stream event we cannot understand (retryable)
  kTruncatedStream,    // a stream ended before [DONE] / message_stop (retryable)
  kSchemaViolation,    // a structured reply still invalid after every attempt
  kNoCodeBlock,        // a code stage's reply had no fenced code block
  kContextOverflow,    // the fixed prompt sections alone exceed the context window
  kBudgetExhausted,    // a budget cap was reached before the call
  kReplayDivergence,   // the request does not match what the recorded run asked
  kReplayExhausted,    // the recorded run has no calls left
  kReplayedFailure,    // replay of a call that failed when it was recorded
  kRecording,          // the call could not be written to the call log
};

// Stable snake_case name ("budget_exhausted"), used in records and JSON.
std::string_view LlmErrorKindName(LlmErrorKind kind);

struct LlmError {
  LlmErrorKind kind = LlmErrorKind::kServer;
  std::string message;
  int http_status = 0;                   // 0 when no HTTP status applies
  std::optional<double> retry_after_ms;  // from Retry-After / retry-after-ms
  int attempts = 0;                      // HTTP attempts made before giving up

  static LlmError Make(LlmErrorKind kind, std::string message) {
    LlmError e;
    e.kind = kind;
    e.message = std::move(message);
    return e;
  }
  // Whether sending the same request again may succeed.
  bool retryable() const;
  // "budget_exhausted: ..." for logs and records.
  std::string Describe() const;
  // For callers that propagate through common's Result (the CLI's exit code:
  // spec and auth errors are the user's, 2; everything else 1).
  Error ToError() const;
};

// Result<T> of the LLM layer: a value or an LlmError.
template <class T>
using LlmResult = Result<T, LlmError>;

}  // namespace kforge::llm
