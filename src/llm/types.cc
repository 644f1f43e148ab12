#include "llm/types.h"

#include <fmt/format.h>

#include "common/hash.h"

namespace kforge::llm {

using nlohmann::json;

std::string_view RoleName(Role role) {
  switch (role) {
    case Role::kSystem:
      return "system";
    case Role::kUser:
      return "user";
    case Role::kAssistant:
      return "assistant";
    case Role::kTool:
      return "tool";
  }
  return "user";
}

namespace {

json ToolCallsToJson(const std::vector<ToolCall>& calls) {
  json out = json::array();
  for (const ToolCall& c : calls) {
    out.push_back({{"id", c.id}, {"name", c.name}, {"arguments", c.arguments_json}});
  }
  return out;
}

std::string_view ToolChoiceModeName(ToolChoice::Mode mode) {
  switch (mode) {
    case ToolChoice::Mode::kAuto:
      return "auto";
    case ToolChoice::Mode::kNone:
      return "none";
    case ToolChoice::Mode::kRequired:
      return "required";
    case ToolChoice::Mode::kNamed:
      return "named";
  }
  return "auto";
}

}  // namespace

std::string DumpJson(const json& j) {
  return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

json RequestToJson(const LlmRequest& request) {
  json messages = json::array();
  for (const ChatMessage& m : request.messages) {
    json j = {{"role", RoleName(m.role)}, {"content", m.content}};
    if (!m.tool_calls.empty()) j["tool_calls"] = ToolCallsToJson(m.tool_calls);
    if (!m.tool_call_id.empty()) j["tool_call_id"] = m.tool_call_id;
    messages.push_back(std::move(j));
  }
  json out = {{"messages", std::move(messages)}, {"max_output_tokens", request.max_output_tokens}};
  if (!request.tools.empty()) {
    json tools = json::array();
    for (const ToolDefinition& t : request.tools) {
      tools.push_back(
          {{"name", t.name}, {"description", t.description}, {"parameters", t.parameters}});
    }
    out["tools"] = std::move(tools);
    out["tool_choice"] = {{"mode", ToolChoiceModeName(request.tool_choice.mode)},
                          {"name", request.tool_choice.name}};
  }
  if (request.output_schema) {
    out["output_schema"] = {{"name", request.output_schema->name},
                            {"description", request.output_schema->description},
                            {"schema", request.output_schema->schema}};
  }
  if (request.temperature) out["temperature"] = *request.temperature;
  return out;
}

std::string RequestHash(const LlmRequest& request) {
  return Sha256Hex(DumpJson(RequestToJson(request)));
}

json ResponseToJson(const LlmResponse& r) {
  return {
      {"text", r.text},
      {"model", r.model},
      {"tool_calls", ToolCallsToJson(r.tool_calls)},
      {"finish_reason", r.finish_reason},
      {"usage", {{"input_tokens", r.usage.input_tokens}, {"output_tokens", r.usage.output_tokens}}},
      {"latency_ms", r.latency_ms},
      {"first_token_ms", r.first_token_ms},
      {"attempts", r.attempts}};
}

LlmResult<LlmResponse> ResponseFromJson(const json& j) {
  try {
    LlmResponse r;
    r.text = j.at("text").get<std::string>();
    r.model = j.value("model", "");
    r.finish_reason = j.value("finish_reason", "");
    if (j.contains("tool_calls")) {
      for (const json& c : j.at("tool_calls")) {
        r.tool_calls.push_back(
            {c.value("id", ""), c.at("name").get<std::string>(), c.value("arguments", "{}")});
      }
    }
    if (j.contains("usage")) {
      r.usage.input_tokens = j.at("usage").value("input_tokens", int64_t{0});
      r.usage.output_tokens = j.at("usage").value("output_tokens", int64_t{0});
    }
    r.latency_ms = j.value("latency_ms", 0.0);
    r.first_token_ms = j.value("first_token_ms", 0.0);
    r.attempts = j.value("attempts", 1);
    return r;
  } catch (const json::exception& e) {
    return LlmError::Make(LlmErrorKind::kMalformedResponse,
                          fmt::format("recorded response is not understood: {}", e.what()));
  }
}

}  // namespace kforge::llm
