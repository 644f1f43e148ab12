// Provider-neutral request and response types. The wire clients translate
// them to and from OpenAI / Anthropic JSON; nothing above the llm module sees
// provider JSON. nlohmann::json appears only where the payload *is* JSON by
// nature: JSON schemas (tool parameters, structured output) and the
// canonical forms used for recording and hashing.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "llm/llm_error.h"

namespace kforge::llm {

enum class Role { kSystem, kUser, kAssistant, kTool };
std::string_view RoleName(Role role);

// A call the model asked for (assistant message) or that it made (response).
struct ToolCall {
  std::string id;
  std::string name;
  std::string arguments_json;  // the arguments object as JSON text
};

struct ChatMessage {
  Role role = Role::kUser;
  std::string content;
  std::vector<ToolCall> tool_calls;  // assistant messages that called tools
  std::string tool_call_id;          // tool messages: the call this answers

  static ChatMessage System(std::string text) { return {Role::kSystem, std::move(text), {}, {}}; }
  static ChatMessage User(std::string text) { return {Role::kUser, std::move(text), {}, {}}; }
  static ChatMessage Assistant(std::string text) {
    return {Role::kAssistant, std::move(text), {}, {}};
  }
  static ChatMessage ToolResult(std::string call_id, std::string text) {
    return {Role::kTool, std::move(text), {}, std::move(call_id)};
  }
};

struct ToolDefinition {
  std::string name;
  std::string description;
  nlohmann::json parameters = nlohmann::json::object();  // JSON schema of the arguments
};

struct ToolChoice {
  enum class Mode { kAuto, kNone, kRequired, kNamed };
  Mode mode = Mode::kAuto;
  std::string name;  // kNamed only
};

// Structured output: the reply must be a JSON value matching `schema`.
struct OutputSchema {
  std::string name;  // [a-zA-Z0-9_-]{1,64}, as OpenAI requires
  std::string description;
  nlohmann::json schema;
};

struct LlmRequest {
  // Not sent to the model: names the pipeline step (recording, replay checks,
  // per-stage model choice).
  std::string stage;
  std::vector<ChatMessage> messages;
  std::vector<ToolDefinition> tools;
  ToolChoice tool_choice;
  std::optional<OutputSchema> output_schema;
  int64_t max_output_tokens = 0;      // 0: the client's configured default
  std::optional<double> temperature;  // unset: the provider's default
};

struct Usage {
  int64_t input_tokens = 0;
  int64_t output_tokens = 0;
};

struct LlmResponse {
  std::string text;   // the assistant's text (structured output: the JSON text)
  std::string model;  // as reported by the server, else as requested
  std::vector<ToolCall> tool_calls;
  std::string finish_reason;  // normalised: stop | length | tool_calls | other values verbatim
  Usage usage;
  double latency_ms = 0;      // whole call, retries included
  double first_token_ms = 0;  // streaming only; 0 when unknown
  int attempts = 1;           // HTTP attempts the call took
  double cost_usd = 0;        // filled by the session from the price table
  int64_t call_seq = 0;       // the call's number in its run (filled by the session)
  std::string call_id;        // the call record's id (filled by the session)
  // What the context-window guard trimmed from the prompt ("history: dropped
  // 2 oldest items"); not recorded, the request itself shows the result.
  std::vector<std::string> prompt_trims;
};

// Receives text as it streams in (for display). After a retried attempt the
// text starts again from the beginning.
using TextDeltaFn = std::function<void(std::string_view)>;

// Compact JSON text. Invalid UTF-8 (a compiler log pasted into a prompt) is
// replaced with U+FFFD instead of throwing.
std::string DumpJson(const nlohmann::json& json);

// Canonical, provider-neutral JSON of a request: the model and the stage are
// left out so a replay with another model spec hashes the same. Keys sorted.
nlohmann::json RequestToJson(const LlmRequest& request);
// Lower-case hex SHA-256 of RequestToJson(request).dump().
std::string RequestHash(const LlmRequest& request);

nlohmann::json ResponseToJson(const LlmResponse& response);
LlmResult<LlmResponse> ResponseFromJson(const nlohmann::json& json);

}  // namespace kforge::llm
