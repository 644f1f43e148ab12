#include "llm/llm_error.h"

#include <fmt/format.h>

namespace kforge::llm {

std::string_view LlmErrorKindName(LlmErrorKind kind) {
  switch (kind) {
    case LlmErrorKind::kBadSpec:
      return "bad_spec";
    case LlmErrorKind::kAuth:
      return "auth";
    case LlmErrorKind::kBadRequest:
      return "bad_request";
    case LlmErrorKind::kRateLimited:
      return "rate_limited";
    case LlmErrorKind::kServer:
      return "server_error";
    case LlmErrorKind::kNetwork:
      return "network";
    case LlmErrorKind::kTls:
      return "tls";
    case LlmErrorKind::kTimeout:
      return "timeout";
    case LlmErrorKind::kMalformedResponse:
      return "malformed_response";
    case LlmErrorKind::kTruncatedStream:
      return "truncated_stream";
    case LlmErrorKind::kSchemaViolation:
      return "schema_violation";
    case LlmErrorKind::kNoCodeBlock:
      return "no_code_block";
    case LlmErrorKind::kContextOverflow:
      return "context_overflow";
    case LlmErrorKind::kBudgetExhausted:
      return "budget_exhausted";
    case LlmErrorKind::kReplayDivergence:
      return "replay_divergence";
    case LlmErrorKind::kReplayExhausted:
      return "replay_exhausted";
    case LlmErrorKind::kReplayedFailure:
      return "replayed_failure";
    case LlmErrorKind::kRecording:
      return "recording";
  }
  return "unknown";
}

bool LlmError::retryable() const {
  switch (kind) {
    case LlmErrorKind::kRateLimited:
    case LlmErrorKind::kServer:
    case LlmErrorKind::kNetwork:
    case LlmErrorKind::kTimeout:
    case LlmErrorKind::kMalformedResponse:
    case LlmErrorKind::kTruncatedStream:
      return true;
    default:
      return false;
  }
}

std::string LlmError::Describe() const {
  return fmt::format("{}: {}", LlmErrorKindName(kind), message);
}

Error LlmError::ToError() const {
  switch (kind) {
    case LlmErrorKind::kBadSpec:
    case LlmErrorKind::kAuth:
      return Error::BadInput(message);
    case LlmErrorKind::kTimeout:
      return Error::Timeout(Describe());
    case LlmErrorKind::kNetwork:
    case LlmErrorKind::kTls:
    case LlmErrorKind::kRecording:
      return Error::Io(Describe());
    default:
      return Error::Internal(Describe());
  }
}

}  // namespace kforge::llm
