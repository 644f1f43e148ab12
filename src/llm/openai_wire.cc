#include "llm/openai_wire.h"

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

json ToolCallToWire(const ToolCall& c) {
  return {{"id", c.id},
          {"type", "function"},
          {"function", {{"name", c.name}, {"arguments", c.arguments_json}}}};
}

std::string StringOrEmpty(const json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_string()) return "";
  return it->get<std::string>();
}

void ReadUsage(const json& usage, Usage& out) {
  if (!usage.is_object()) return;
  if (auto p = usage.find("prompt_tokens"); p != usage.end() && p->is_number_integer()) {
    out.input_tokens = p->get<int64_t>();
  }
  if (auto c = usage.find("completion_tokens"); c != usage.end() && c->is_number_integer()) {
    out.output_tokens = c->get<int64_t>();
  }
}

// An "error" object in a 200 body or inside a stream: the server failed mid-way.
std::optional<LlmError> EmbeddedError(const json& j) {
  auto it = j.find("error");
  if (it == j.end() || it->is_null()) return std::nullopt;
  return LlmError::Make(LlmErrorKind::kServer,
                        fmt::format("server reported an error: {}", ErrorBodyMessage(DumpJson(j))));
}

class OpenAiStream : public StreamAssembler {
 public:
  OpenAiStream(std::string requested_model, TextDeltaFn on_text) : on_text_(std::move(on_text)) {
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
                            fmt::format("stream ended after {} events without [DONE]{}", events_,
                                        cut ? " (in the middle of an event)" : ""));
    }
    for (auto& [index, call] : tool_calls_) response_.tool_calls.push_back(std::move(call));
    return response_;
  }

 private:
  void OnEvent(const SseEvent& e) {
    if (error_ || done_) return;
    ++events_;
    if (e.data == "[DONE]") {
      done_ = true;
      return;
    }
    json j = json::parse(e.data, nullptr, false);
    if (!j.is_object()) {
      error_ = Malformed(fmt::format("stream event {} is not a JSON object", events_));
      return;
    }
    if (auto err = EmbeddedError(j)) {
      error_ = *err;
      return;
    }
    if (std::string model = StringOrEmpty(j, "model"); !model.empty()) response_.model = model;
    if (auto u = j.find("usage"); u != j.end()) ReadUsage(*u, response_.usage);
    auto choices = j.find("choices");
    if (choices == j.end() || !choices->is_array()) return;
    for (const json& choice : *choices) {
      if (choice.value("index", 0) != 0) continue;  // n > 1 is never asked for
      if (std::string fr = StringOrEmpty(choice, "finish_reason"); !fr.empty()) {
        response_.finish_reason = NormalizeOpenAiFinishReason(fr);
      }
      auto delta = choice.find("delta");
      if (delta == choice.end() || !delta->is_object()) continue;
      if (std::string text = StringOrEmpty(*delta, "content"); !text.empty()) {
        produced_output_ = true;
        response_.text += text;
        if (on_text_) on_text_(text);
      }
      for (const char* key : {"reasoning_content", "reasoning"}) {
        if (!StringOrEmpty(*delta, key).empty()) produced_output_ = true;
      }
      if (std::string refusal = StringOrEmpty(*delta, "refusal"); !refusal.empty()) {
        produced_output_ = true;
        response_.text += refusal;
        response_.finish_reason = "refusal";
      }
      if (auto calls = delta->find("tool_calls"); calls != delta->end() && calls->is_array()) {
        for (const json& c : *calls) {
          produced_output_ = true;
          ToolCall& call = tool_calls_[c.value("index", 0)];
          if (std::string id = StringOrEmpty(c, "id"); !id.empty()) call.id = id;
          if (auto f = c.find("function"); f != c.end() && f->is_object()) {
            if (std::string name = StringOrEmpty(*f, "name"); !name.empty()) call.name = name;
            call.arguments_json += StringOrEmpty(*f, "arguments");
          }
        }
      }
    }
  }

  SseParser parser_;
  TextDeltaFn on_text_;
  LlmResponse response_;
  std::map<int, ToolCall> tool_calls_;
  std::optional<LlmError> error_;
  bool done_ = false;
  bool produced_output_ = false;
  int events_ = 0;
};

}  // namespace

std::string NormalizeOpenAiFinishReason(std::string_view reason) {
  if (reason == "function_call") return "tool_calls";
  return std::string(reason);
}

OpenAiWire::OpenAiWire(Endpoint endpoint, MaxTokensField field)
    : endpoint_(std::move(endpoint)), field_(field) {}

LlmResult<HttpRequest> OpenAiWire::BuildRequest(const LlmRequest& request, bool stream) const {
  json messages = json::array();
  for (const ChatMessage& m : request.messages) {
    json j = {{"role", RoleName(m.role)}};
    if (m.role == Role::kTool) {
      if (m.tool_call_id.empty()) {
        return LlmError::Make(LlmErrorKind::kBadSpec, "a tool message needs its tool_call_id");
      }
      j["tool_call_id"] = m.tool_call_id;
    }
    if (m.role == Role::kAssistant && !m.tool_calls.empty()) {
      j["content"] = m.content.empty() ? json(nullptr) : json(m.content);
      j["tool_calls"] = json::array();
      for (const ToolCall& c : m.tool_calls) j["tool_calls"].push_back(ToolCallToWire(c));
    } else {
      j["content"] = m.content;
    }
    messages.push_back(std::move(j));
  }
  json body = {{"model", endpoint_.model}, {"messages", std::move(messages)}, {"stream", stream}};
  if (stream) body["stream_options"] = {{"include_usage", true}};
  int64_t max_tokens = request.max_output_tokens > 0 ? request.max_output_tokens
                                                     : endpoint_.default_max_output_tokens;
  bool completion_field = field_ == MaxTokensField::kMaxCompletionTokens ||
                          (field_ == MaxTokensField::kAuto &&
                           endpoint_.base_url.find("api.openai.com") != std::string::npos);
  if (max_tokens > 0) body[completion_field ? "max_completion_tokens" : "max_tokens"] = max_tokens;
  if (request.temperature) body["temperature"] = *request.temperature;
  if (!request.tools.empty()) {
    json tools = json::array();
    for (const ToolDefinition& t : request.tools) {
      json fn = {{"name", t.name}, {"parameters", t.parameters}};
      if (!t.description.empty()) fn["description"] = t.description;
      tools.push_back({{"type", "function"}, {"function", std::move(fn)}});
    }
    body["tools"] = std::move(tools);
    switch (request.tool_choice.mode) {
      case ToolChoice::Mode::kAuto:
        body["tool_choice"] = "auto";
        break;
      case ToolChoice::Mode::kNone:
        body["tool_choice"] = "none";
        break;
      case ToolChoice::Mode::kRequired:
        body["tool_choice"] = "required";
        break;
      case ToolChoice::Mode::kNamed:
        body["tool_choice"] = {{"type", "function"},
                               {"function", {{"name", request.tool_choice.name}}}};
        break;
    }
  }
  if (request.output_schema) {
    json schema = {{"name", request.output_schema->name},
                   {"schema", request.output_schema->schema},
                   {"strict", true}};
    if (!request.output_schema->description.empty()) {
      schema["description"] = request.output_schema->description;
    }
    body["response_format"] = {{"type", "json_schema"}, {"json_schema", std::move(schema)}};
  }

  HttpRequest http;
  http.url = endpoint_.base_url + "/chat/completions";
  http.headers.emplace_back("Content-Type", "application/json");
  http.headers.emplace_back("Accept", stream ? "text/event-stream" : "application/json");
  if (!endpoint_.api_key.empty()) {
    http.headers.emplace_back("Authorization", "Bearer " + endpoint_.api_key);
  }
  http.body = DumpJson(body);
  return http;
}

LlmResult<LlmResponse> OpenAiWire::ParseResponse(const LlmRequest&, std::string_view body) const {
  json j = json::parse(body, nullptr, false);
  if (!j.is_object()) return Malformed("response body is not a JSON object");
  if (auto err = EmbeddedError(j)) return *err;
  auto choices = j.find("choices");
  if (choices == j.end() || !choices->is_array() || choices->empty()) {
    return Malformed("response has no choices");
  }
  const json& choice = choices->front();
  auto message = choice.find("message");
  if (message == choice.end() || !message->is_object()) {
    return Malformed("response choice has no message");
  }
  LlmResponse r;
  r.model = StringOrEmpty(j, "model");
  if (r.model.empty()) r.model = endpoint_.model;
  r.text = StringOrEmpty(*message, "content");
  r.finish_reason = NormalizeOpenAiFinishReason(StringOrEmpty(choice, "finish_reason"));
  if (std::string refusal = StringOrEmpty(*message, "refusal"); !refusal.empty()) {
    r.text = refusal;
    r.finish_reason = "refusal";
  }
  if (auto calls = message->find("tool_calls"); calls != message->end() && calls->is_array()) {
    for (const json& c : *calls) {
      auto f = c.find("function");
      if (f == c.end() || !f->is_object()) return Malformed("tool call without a function");
      r.tool_calls.push_back(
          {StringOrEmpty(c, "id"), StringOrEmpty(*f, "name"), StringOrEmpty(*f, "arguments")});
    }
  }
  if (auto u = j.find("usage"); u != j.end()) ReadUsage(*u, r.usage);
  return r;
}

std::unique_ptr<StreamAssembler> OpenAiWire::NewStream(const LlmRequest&,
                                                       TextDeltaFn on_text) const {
  return std::make_unique<OpenAiStream>(endpoint_.model, std::move(on_text));
}

}  // namespace kforge::llm
