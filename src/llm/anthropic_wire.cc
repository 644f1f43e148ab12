#include "llm/anthropic_wire.h"

#include <fmt/format.h>

#include <map>
#include <nlohmann/json.hpp>

#include "llm/sse_parser.h"

namespace kforge::llm {

using nlohmann::json;

namespace {

LlmError Malformed(std::string what) {
  return LlmError::Make(LlmErrorKind::kMalformedResponse, std::move(what));
}

std::string StringOrEmpty(const json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_string()) return "";
  return it->get<std::string>();
}

int64_t IntOrZero(const json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_number_integer()) return 0;
  return it->get<int64_t>();
}

// Cached and cache-creating input tokens are input too.
void ReadUsage(const json& usage, Usage& out, bool is_final_delta) {
  if (!usage.is_object()) return;
  int64_t input = IntOrZero(usage, "input_tokens") + IntOrZero(usage, "cache_read_input_tokens") +
                  IntOrZero(usage, "cache_creation_input_tokens");
  // message_delta carries cumulative counts; it may repeat input_tokens or omit them.
  if (!is_final_delta || input > 0) out.input_tokens = input;
  if (usage.contains("output_tokens")) out.output_tokens = IntOrZero(usage, "output_tokens");
}

// The structured-output tool's input is the answer, not a tool call.
std::string SchemaToolName(const LlmRequest& request) {
  return request.output_schema ? request.output_schema->name : std::string();
}

class AnthropicStream : public StreamAssembler {
 public:
  AnthropicStream(std::string requested_model, std::string schema_tool, TextDeltaFn on_text)
      : schema_tool_(std::move(schema_tool)), on_text_(std::move(on_text)) {
    response_.model = std::move(requested_model);
  }

  bool Consume(std::string_view bytes) override {
    parser_.Feed(bytes, [this](const SseEvent& e) { OnEvent(e); });
    return !error_;
  }
  bool produced_output() const override { return produced_output_; }

  LlmResult<LlmResponse> Finish() override {
    bool cut = parser_.Finish();
    if (error_) return *error_;
    if (!done_) {
      return LlmError::Make(LlmErrorKind::kTruncatedStream,
                            fmt::format("stream ended after {} events without message_stop{}",
                                        events_, cut ? " (in the middle of an event)" : ""));
    }
    std::string structured;
    for (auto& [index, block] : blocks_) {
      if (block.type == "text") {
        response_.text += block.text;
      } else if (block.type == "tool_use") {
        std::string args = block.text.empty() ? "{}" : block.text;
        if (!json::accept(args)) {
          return Malformed(fmt::format("tool_use block {} has invalid JSON input", index));
        }
        if (!schema_tool_.empty() && block.name == schema_tool_) {
          structured = DumpJson(json::parse(args));
        } else {
          response_.tool_calls.push_back({block.id, block.name, args});
        }
      }
    }
    if (!schema_tool_.empty() && !structured.empty()) response_.text = structured;
    return response_;
  }

 private:
  struct Block {
    std::string type;
    std::string id;
    std::string name;
    std::string text;  // text, or the tool input's JSON as it streamed
  };

  void OnEvent(const SseEvent& e) {
    if (error_ || done_) return;
    ++events_;
    json j = json::parse(e.data, nullptr, false);
    if (!j.is_object()) {
      error_ = Malformed(fmt::format("stream event {} is not a JSON object", events_));
      return;
    }
    std::string type = StringOrEmpty(j, "type");
    if (type.empty()) type = e.event;
    if (type == "message_start") {
      const json& msg = j.value("message", json::object());
      if (std::string model = StringOrEmpty(msg, "model"); !model.empty()) response_.model = model;
      if (auto u = msg.find("usage"); u != msg.end()) ReadUsage(*u, response_.usage, false);
    } else if (type == "content_block_start") {
      const json& cb = j.value("content_block", json::object());
      Block& b = blocks_[static_cast<int>(IntOrZero(j, "index"))];
      b.type = StringOrEmpty(cb, "type");
      b.id = StringOrEmpty(cb, "id");
      b.name = StringOrEmpty(cb, "name");
      if (b.type == "text") b.text = StringOrEmpty(cb, "text");
    } else if (type == "content_block_delta") {
      produced_output_ = true;
      const json& d = j.value("delta", json::object());
      Block& b = blocks_[static_cast<int>(IntOrZero(j, "index"))];
      std::string dtype = StringOrEmpty(d, "type");
      if (dtype == "text_delta") {
        std::string t = StringOrEmpty(d, "text");
        b.text += t;
        if (on_text_ && !t.empty()) on_text_(t);
      } else if (dtype == "input_json_delta") {
        b.text += StringOrEmpty(d, "partial_json");
      }
      // thinking_delta / signature_delta: progress, not part of the answer.
    } else if (type == "message_delta") {
      const json& d = j.value("delta", json::object());
      if (std::string sr = StringOrEmpty(d, "stop_reason"); !sr.empty()) {
        response_.finish_reason = NormalizeAnthropicStopReason(sr);
      }
      if (auto u = j.find("usage"); u != j.end()) ReadUsage(*u, response_.usage, true);
    } else if (type == "message_stop") {
      done_ = true;
    } else if (type == "error") {
      error_ = LlmError::Make(LlmErrorKind::kServer,
                              fmt::format("stream error: {}", ErrorBodyMessage(e.data)));
    }
    // ping, content_block_stop and unknown events carry nothing we need.
  }

  SseParser parser_;
  std::string schema_tool_;
  TextDeltaFn on_text_;
  LlmResponse response_;
  std::map<int, Block> blocks_;
  std::optional<LlmError> error_;
  bool done_ = false;
  bool produced_output_ = false;
  int events_ = 0;
};

}  // namespace

std::string NormalizeAnthropicStopReason(std::string_view reason) {
  if (reason == "end_turn" || reason == "stop_sequence") return "stop";
  if (reason == "max_tokens") return "length";
  if (reason == "tool_use") return "tool_calls";
  return std::string(reason);
}

AnthropicWire::AnthropicWire(Endpoint endpoint, std::string api_version)
    : endpoint_(std::move(endpoint)), api_version_(std::move(api_version)) {}

LlmResult<HttpRequest> AnthropicWire::BuildRequest(const LlmRequest& request, bool stream) const {
  std::string system;
  json messages = json::array();
  auto append = [&](const char* role, json block) {
    // Anthropic wants user and assistant turns to alternate: consecutive
    // messages of one role (several tool results) share one turn.
    if (!messages.empty() && messages.back()["role"] == role) {
      messages.back()["content"].push_back(std::move(block));
    } else {
      messages.push_back({{"role", role}, {"content", json::array({std::move(block)})}});
    }
  };
  for (const ChatMessage& m : request.messages) {
    switch (m.role) {
      case Role::kSystem:
        if (!system.empty()) system += "\n\n";
        system += m.content;
        break;
      case Role::kUser:
        append("user", {{"type", "text"}, {"text", m.content}});
        break;
      case Role::kAssistant:
        if (!m.content.empty() || m.tool_calls.empty()) {
          append("assistant", {{"type", "text"}, {"text", m.content}});
        }
        for (const ToolCall& c : m.tool_calls) {
          json input =
              json::parse(c.arguments_json.empty() ? "{}" : c.arguments_json, nullptr, false);
          if (!input.is_object()) {
            return LlmError::Make(
                LlmErrorKind::kBadSpec,
                fmt::format("tool call '{}' has arguments that are not a JSON object", c.name));
          }
          append("assistant",
                 {{"type", "tool_use"}, {"id", c.id}, {"name", c.name}, {"input", input}});
        }
        break;
      case Role::kTool:
        if (m.tool_call_id.empty()) {
          return LlmError::Make(LlmErrorKind::kBadSpec, "a tool message needs its tool_call_id");
        }
        append("user",
               {{"type", "tool_result"}, {"tool_use_id", m.tool_call_id}, {"content", m.content}});
        break;
    }
  }
  int64_t max_tokens = request.max_output_tokens > 0 ? request.max_output_tokens
                                                     : endpoint_.default_max_output_tokens;
  json body = {{"model", endpoint_.model},
               {"messages", std::move(messages)},
               {"max_tokens", max_tokens},
               {"stream", stream}};
  if (!system.empty()) body["system"] = system;
  if (request.temperature) body["temperature"] = *request.temperature;

  json tools = json::array();
  for (const ToolDefinition& t : request.tools) {
    json tool = {{"name", t.name}, {"input_schema", t.parameters}};
    if (!t.description.empty()) tool["description"] = t.description;
    tools.push_back(std::move(tool));
  }
  if (request.output_schema) {
    const OutputSchema& s = *request.output_schema;
    json tool = {{"name", s.name}, {"input_schema", s.schema}};
    tool["description"] = s.description.empty()
                              ? "Give your answer by calling this tool with the answer as input."
                              : s.description;
    tools.push_back(std::move(tool));
    body["tool_choice"] = {{"type", "tool"}, {"name", s.name}};
  } else if (!request.tools.empty()) {
    switch (request.tool_choice.mode) {
      case ToolChoice::Mode::kAuto:
        body["tool_choice"] = {{"type", "auto"}};
        break;
      case ToolChoice::Mode::kNone:
        body["tool_choice"] = {{"type", "none"}};
        break;
      case ToolChoice::Mode::kRequired:
        body["tool_choice"] = {{"type", "any"}};
        break;
      case ToolChoice::Mode::kNamed:
        body["tool_choice"] = {{"type", "tool"}, {"name", request.tool_choice.name}};
        break;
    }
  }
  if (!tools.empty()) body["tools"] = std::move(tools);

  HttpRequest http;
  const std::string& base = endpoint_.base_url;
  bool has_v1 = base.size() >= 3 && base.compare(base.size() - 3, 3, "/v1") == 0;
  http.url = base + (has_v1 ? "/messages" : "/v1/messages");
  http.headers.emplace_back("Content-Type", "application/json");
  http.headers.emplace_back("Accept", stream ? "text/event-stream" : "application/json");
  http.headers.emplace_back("anthropic-version", api_version_);
  if (!endpoint_.api_key.empty()) http.headers.emplace_back("x-api-key", endpoint_.api_key);
  http.body = DumpJson(body);
  return http;
}

LlmResult<LlmResponse> AnthropicWire::ParseResponse(const LlmRequest& request,
                                                    std::string_view body) const {
  json j = json::parse(body, nullptr, false);
  if (!j.is_object()) return Malformed("response body is not a JSON object");
  if (StringOrEmpty(j, "type") == "error") {
    return LlmError::Make(LlmErrorKind::kServer,
                          fmt::format("server reported an error: {}", ErrorBodyMessage(body)));
  }
  auto content = j.find("content");
  if (content == j.end() || !content->is_array()) return Malformed("response has no content");
  LlmResponse r;
  r.model = StringOrEmpty(j, "model");
  if (r.model.empty()) r.model = endpoint_.model;
  r.finish_reason = NormalizeAnthropicStopReason(StringOrEmpty(j, "stop_reason"));
  std::string schema_tool = SchemaToolName(request);
  std::string structured;
  for (const json& block : *content) {
    std::string type = StringOrEmpty(block, "type");
    if (type == "text") {
      r.text += StringOrEmpty(block, "text");
    } else if (type == "tool_use") {
      std::string name = StringOrEmpty(block, "name");
      std::string input = DumpJson(block.value("input", json::object()));
      if (!schema_tool.empty() && name == schema_tool) {
        structured = input;
      } else {
        r.tool_calls.push_back({StringOrEmpty(block, "id"), name, input});
      }
    }
  }
  if (!structured.empty()) r.text = structured;
  if (auto u = j.find("usage"); u != j.end()) ReadUsage(*u, r.usage, false);
  return r;
}

std::unique_ptr<StreamAssembler> AnthropicWire::NewStream(const LlmRequest& request,
                                                          TextDeltaFn on_text) const {
  return std::make_unique<AnthropicStream>(endpoint_.model, SchemaToolName(request),
                                           std::move(on_text));
}

}  // namespace kforge::llm
