// The two wire formats on bodies and streams shaped like the providers' own.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "llm/anthropic_wire.h"
#include "llm/openai_wire.h"

namespace kforge::llm {
namespace {

using nlohmann::json;

Endpoint MakeEndpoint(std::string base, std::string key = "") {
  Endpoint e;
  e.model = "test-model";
  e.base_url = std::move(base);
  e.api_key = std::move(key);
  e.default_max_output_tokens = 1000;
  return e;
}

std::string HeaderOf(const HttpRequest& r, const std::string& name) {
  for (const auto& [k, v] : r.headers) {
    if (k == name) return v;
  }
  return "";
}

LlmRequest SchemaRequest() {
  LlmRequest r;
  r.messages = {ChatMessage::System("be terse"), ChatMessage::User("classify this")};
  r.output_schema = OutputSchema{"verdict", "", json{{"type", "object"}}};
  return r;
}

// Feeds a stream in awkward pieces, as a network would.
LlmResult<LlmResponse> Stream(StreamAssembler& s, const std::string& body, size_t piece = 7) {
  for (size_t i = 0; i < body.size(); i += piece) {
    if (!s.Consume(std::string_view(body).substr(i, piece))) break;
  }
  return s.Finish();
}

std::string OpenAiChunk(const json& delta, const json& finish = nullptr) {
  json c = {{"id", "c1"},
            {"object", "chat.completion.chunk"},
            {"model", "served-model"},
            {"choices", {{{"index", 0}, {"delta", delta}, {"finish_reason", finish}}}}};
  return "data: " + c.dump() + "\n\n";
}

TEST(OpenAiWire, BuildsChatCompletionsRequest) {
  OpenAiWire wire(MakeEndpoint("http://localhost:8000/v1", "sk-test"));
  LlmRequest req = SchemaRequest();
  req.temperature = 0.2;
  auto http = wire.BuildRequest(req, /*stream=*/true);
  ASSERT_TRUE(http.ok());
  EXPECT_EQ(http->url, "http://localhost:8000/v1/chat/completions");
  EXPECT_EQ(HeaderOf(*http, "Authorization"), "Bearer sk-test");
  json body = json::parse(http->body);
  EXPECT_EQ(body["model"], "test-model");
  EXPECT_EQ(body["stream"], true);
  EXPECT_EQ(body["stream_options"]["include_usage"], true);
  EXPECT_EQ(body["max_tokens"], 1000);  // a local server: max_tokens
  EXPECT_FALSE(body.contains("max_completion_tokens"));
  EXPECT_DOUBLE_EQ(body["temperature"].get<double>(), 0.2);
  ASSERT_EQ(body["messages"].size(), 2u);
  EXPECT_EQ(body["messages"][0]["role"], "system");
  EXPECT_EQ(body["messages"][1]["content"], "classify this");
  EXPECT_EQ(body["response_format"]["type"], "json_schema");
  EXPECT_EQ(body["response_format"]["json_schema"]["name"], "verdict");
  EXPECT_EQ(body["response_format"]["json_schema"]["strict"], true);
  EXPECT_EQ(body["response_format"]["json_schema"]["schema"], json({{"type", "object"}}));
}

TEST(OpenAiWire, InvalidUtf8InAPromptIsReplacedNotFatal) {
  OpenAiWire wire(MakeEndpoint("http://x/v1"));
  LlmRequest req;
  req.messages = {ChatMessage::User("nvcc: \xff bad byte")};
  auto http = wire.BuildRequest(req, false);
  ASSERT_TRUE(http.ok());
  EXPECT_EQ(json::parse(http->body)["messages"][0]["content"], "nvcc: \xEF\xBF\xBD bad byte");
  EXPECT_EQ(RequestHash(req).size(), 64u);
}

TEST(OpenAiWire, HostedOpenAiGetsMaxCompletionTokensAndNoKeyMeansNoHeader) {
  OpenAiWire hosted(MakeEndpoint("https://api.openai.com/v1"));
  auto http = hosted.BuildRequest(SchemaRequest(), false);
  ASSERT_TRUE(http.ok());
  json body = json::parse(http->body);
  EXPECT_EQ(body["max_completion_tokens"], 1000);
  EXPECT_FALSE(body.contains("stream_options"));
  EXPECT_EQ(HeaderOf(*http, "Authorization"), "");
  OpenAiWire forced(MakeEndpoint("http://x/v1"), MaxTokensField::kMaxCompletionTokens);
  EXPECT_TRUE(json::parse(forced.BuildRequest(SchemaRequest(), false)->body)
                  .contains("max_completion_tokens"));
}

TEST(OpenAiWire, ExpressesToolsAndToolMessages) {
  OpenAiWire wire(MakeEndpoint("http://x/v1"));
  LlmRequest req;
  ChatMessage asked = ChatMessage::Assistant("");
  asked.tool_calls = {{"call_1", "compile", R"({"file":"k.cu"})"}};
  req.messages = {ChatMessage::User("go"), asked, ChatMessage::ToolResult("call_1", "ok")};
  req.tools = {{"compile", "Compile a file", json{{"type", "object"}}}};
  req.tool_choice = {ToolChoice::Mode::kNamed, "compile"};
  json body = json::parse(wire.BuildRequest(req, false)->body);
  EXPECT_EQ(body["tools"][0]["type"], "function");
  EXPECT_EQ(body["tools"][0]["function"]["name"], "compile");
  EXPECT_EQ(body["tool_choice"]["function"]["name"], "compile");
  EXPECT_TRUE(body["messages"][1]["content"].is_null());
  EXPECT_EQ(body["messages"][1]["tool_calls"][0]["function"]["arguments"], R"({"file":"k.cu"})");
  EXPECT_EQ(body["messages"][2]["role"], "tool");
  EXPECT_EQ(body["messages"][2]["tool_call_id"], "call_1");

  req.messages.push_back(ChatMessage::ToolResult("", "orphan"));
  auto bad = wire.BuildRequest(req, false);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().kind, LlmErrorKind::kBadSpec);
}

TEST(OpenAiWire, ParsesWholeResponse) {
  OpenAiWire wire(MakeEndpoint("http://x/v1"));
  json body = {{"model", "served"},
               {"choices",
                {{{"index", 0},
                  {"message",
                   {{"role", "assistant"},
                    {"content", "hi"},
                    {"tool_calls",
                     {{{"id", "c9"},
                       {"type", "function"},
                       {"function", {{"name", "f"}, {"arguments", "{}"}}}}}}}},
                  {"finish_reason", "tool_calls"}}}},
               {"usage", {{"prompt_tokens", 11}, {"completion_tokens", 3}}}};
  auto r = wire.ParseResponse({}, body.dump());
  ASSERT_TRUE(r.ok()) << r.error().Describe();
  EXPECT_EQ(r->text, "hi");
  EXPECT_EQ(r->model, "served");
  EXPECT_EQ(r->finish_reason, "tool_calls");
  EXPECT_EQ(r->usage.input_tokens, 11);
  EXPECT_EQ(r->usage.output_tokens, 3);
  ASSERT_EQ(r->tool_calls.size(), 1u);
  EXPECT_EQ(r->tool_calls[0].id, "c9");
}

TEST(OpenAiWire, RejectsBodiesItCannotUse) {
  OpenAiWire wire(MakeEndpoint("http://x/v1"));
  EXPECT_EQ(wire.ParseResponse({}, "{not json").error().kind, LlmErrorKind::kMalformedResponse);
  EXPECT_EQ(wire.ParseResponse({}, R"({"choices": []})").error().kind,
            LlmErrorKind::kMalformedResponse);
  auto embedded = wire.ParseResponse({}, R"({"error": {"message": "boom"}})");
  EXPECT_EQ(embedded.error().kind, LlmErrorKind::kServer);
  EXPECT_NE(embedded.error().message.find("boom"), std::string::npos);
  auto refusal = wire.ParseResponse(
      {}, R"({"choices":[{"message":{"content":null,"refusal":"no"},"finish_reason":"stop"}]})");
  ASSERT_TRUE(refusal.ok());
  EXPECT_EQ(refusal->finish_reason, "refusal");
}

TEST(OpenAiWire, AssemblesStreamWithUsageInFinalChunk) {
  OpenAiWire wire(MakeEndpoint("http://x/v1"));
  std::string seen;
  auto s = wire.NewStream({}, [&](std::string_view t) { seen += t; });
  std::string body = OpenAiChunk({{"role", "assistant"}, {"content", ""}});
  ASSERT_TRUE(s->Consume(body));
  EXPECT_FALSE(s->produced_output());  // the role preamble is not output
  body =
      OpenAiChunk({{"content", "Hel"}}) + OpenAiChunk({{"content", "lo"}}) +
      OpenAiChunk(json::object(), "stop") + "data: " +
      json{{"choices", json::array()}, {"usage", {{"prompt_tokens", 5}, {"completion_tokens", 2}}}}
          .dump() +
      "\n\ndata: [DONE]\n\n";
  auto r = Stream(*s, body);
  EXPECT_TRUE(s->produced_output());
  ASSERT_TRUE(r.ok()) << r.error().Describe();
  EXPECT_EQ(r->text, "Hello");
  EXPECT_EQ(seen, "Hello");
  EXPECT_EQ(r->model, "served-model");
  EXPECT_EQ(r->finish_reason, "stop");
  EXPECT_EQ(r->usage.input_tokens, 5);
  EXPECT_EQ(r->usage.output_tokens, 2);
}

TEST(OpenAiWire, AssemblesStreamedToolCallsByIndex) {
  OpenAiWire wire(MakeEndpoint("http://x/v1"));
  auto s = wire.NewStream({}, {});
  std::string body =
      OpenAiChunk({{"tool_calls",
                    {{{"index", 0},
                      {"id", "a"},
                      {"type", "function"},
                      {"function", {{"name", "f"}, {"arguments", ""}}}}}}}) +
      OpenAiChunk({{"tool_calls",
                    {{{"index", 1},
                      {"id", "b"},
                      {"type", "function"},
                      {"function", {{"name", "g"}, {"arguments", "{\"y\""}}}}}}}) +
      OpenAiChunk({{"tool_calls", {{{"index", 0}, {"function", {{"arguments", "{\"x\":1}"}}}}}}}) +
      OpenAiChunk({{"tool_calls", {{{"index", 1}, {"function", {{"arguments", ":2}"}}}}}}}) +
      OpenAiChunk(json::object(), "tool_calls") + "data: [DONE]\n\n";
  auto r = Stream(*s, body, 13);
  ASSERT_TRUE(r.ok()) << r.error().Describe();
  ASSERT_EQ(r->tool_calls.size(), 2u);
  EXPECT_EQ(r->tool_calls[0].name, "f");
  EXPECT_EQ(r->tool_calls[0].arguments_json, "{\"x\":1}");
  EXPECT_EQ(r->tool_calls[1].id, "b");
  EXPECT_EQ(r->tool_calls[1].arguments_json, "{\"y\":2}");
  EXPECT_EQ(r->finish_reason, "tool_calls");
}

TEST(OpenAiWire, StreamWithoutDoneIsTruncated) {
  OpenAiWire wire(MakeEndpoint("http://x/v1"));
  auto s = wire.NewStream({}, {});
  auto r = Stream(*s, OpenAiChunk({{"content", "par"}}) + OpenAiChunk(json::object(), "stop"));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().kind, LlmErrorKind::kTruncatedStream);
  EXPECT_TRUE(r.error().retryable());
  auto cut = wire.NewStream({}, {});
  auto r2 = Stream(*cut, OpenAiChunk({{"content", "x"}}) + "data: {\"choi");
  EXPECT_EQ(r2.error().kind, LlmErrorKind::kTruncatedStream);
  EXPECT_NE(r2.error().message.find("middle of an event"), std::string::npos);
}

TEST(OpenAiWire, StreamErrorsAndGarbage) {
  OpenAiWire wire(MakeEndpoint("http://x/v1"));
  auto s = wire.NewStream({}, {});
  auto r = Stream(*s, OpenAiChunk({{"content", "x"}}) +
                          "data: {\"error\": {\"message\": \"overloaded\"}}\n\ndata: [DONE]\n\n");
  EXPECT_EQ(r.error().kind, LlmErrorKind::kServer);
  EXPECT_NE(r.error().message.find("overloaded"), std::string::npos);
  auto g = wire.NewStream({}, {});
  EXPECT_FALSE(g->Consume("data: {oops\n\n"));  // stops the transfer at once
  EXPECT_EQ(g->Finish().error().kind, LlmErrorKind::kMalformedResponse);
}

TEST(AnthropicWire, BuildsMessagesRequest) {
  AnthropicWire wire(MakeEndpoint("https://api.anthropic.com", "ak"));
  LlmRequest req;
  ChatMessage asked = ChatMessage::Assistant("let me compile");
  asked.tool_calls = {{"tu1", "compile", R"({"file":"a"})"}, {"tu2", "run", "{}"}};
  req.messages = {ChatMessage::System("sys one"),
                  ChatMessage::System("sys two"),
                  ChatMessage::User("go"),
                  asked,
                  ChatMessage::ToolResult("tu1", "built"),
                  ChatMessage::ToolResult("tu2", "ran")};
  req.tools = {{"compile", "", json{{"type", "object"}}}};
  req.tool_choice = {ToolChoice::Mode::kRequired, ""};
  auto http = wire.BuildRequest(req, true);
  ASSERT_TRUE(http.ok());
  EXPECT_EQ(http->url, "https://api.anthropic.com/v1/messages");
  EXPECT_EQ(HeaderOf(*http, "x-api-key"), "ak");
  EXPECT_EQ(HeaderOf(*http, "anthropic-version"), "2023-06-01");
  json body = json::parse(http->body);
  EXPECT_EQ(body["system"], "sys one\n\nsys two");
  EXPECT_EQ(body["max_tokens"], 1000);
  EXPECT_EQ(body["stream"], true);
  ASSERT_EQ(body["messages"].size(), 3u);  // user, assistant, user (both tool results)
  EXPECT_EQ(body["messages"][1]["content"].size(), 3u);  // text + two tool_use blocks
  EXPECT_EQ(body["messages"][1]["content"][1]["type"], "tool_use");
  EXPECT_EQ(body["messages"][1]["content"][1]["input"]["file"], "a");
  EXPECT_EQ(body["messages"][2]["role"], "user");
  EXPECT_EQ(body["messages"][2]["content"].size(), 2u);
  EXPECT_EQ(body["messages"][2]["content"][0]["tool_use_id"], "tu1");
  EXPECT_EQ(body["tool_choice"]["type"], "any");
  EXPECT_EQ(body["tools"][0]["input_schema"]["type"], "object");
}

TEST(AnthropicWire, StructuredOutputIsAForcedTool) {
  AnthropicWire wire(MakeEndpoint("http://localhost:9000/v1"));
  auto http = wire.BuildRequest(SchemaRequest(), false);
  ASSERT_TRUE(http.ok());
  EXPECT_EQ(http->url, "http://localhost:9000/v1/messages");
  json body = json::parse(http->body);
  EXPECT_EQ(body["tool_choice"], json({{"type", "tool"}, {"name", "verdict"}}));
  EXPECT_EQ(body["tools"][0]["name"], "verdict");
  EXPECT_EQ(body["tools"][0]["input_schema"], json({{"type", "object"}}));
}

TEST(AnthropicWire, ParsesWholeResponseTakingTheSchemaToolAsText) {
  AnthropicWire wire(MakeEndpoint("http://x"));
  json body = {
      {"model", "claude-x"},
      {"content",
       {{{"type", "text"}, {"text", "Here it is."}},
        {{"type", "tool_use"}, {"id", "t"}, {"name", "verdict"}, {"input", {{"ok", true}}}},
        {{"type", "tool_use"}, {"id", "u"}, {"name", "other"}, {"input", json::object()}}}},
      {"stop_reason", "tool_use"},
      {"usage", {{"input_tokens", 10}, {"cache_read_input_tokens", 5}, {"output_tokens", 4}}}};
  auto r = wire.ParseResponse(SchemaRequest(), body.dump());
  ASSERT_TRUE(r.ok()) << r.error().Describe();
  EXPECT_EQ(json::parse(r->text), json({{"ok", true}}));
  ASSERT_EQ(r->tool_calls.size(), 1u);
  EXPECT_EQ(r->tool_calls[0].name, "other");
  EXPECT_EQ(r->finish_reason, "tool_calls");
  EXPECT_EQ(r->usage.input_tokens, 15);
  EXPECT_EQ(r->usage.output_tokens, 4);
  auto err = wire.ParseResponse(
      {}, R"({"type":"error","error":{"type":"overloaded_error","message":"busy"}})");
  EXPECT_EQ(err.error().kind, LlmErrorKind::kServer);
}

std::string AnthropicEvent(const std::string& type, json data) {
  data["type"] = type;
  return "event: " + type + "\ndata: " + data.dump() + "\n\n";
}

TEST(AnthropicWire, AssemblesStreamWithToolInput) {
  AnthropicWire wire(MakeEndpoint("http://x"));
  std::string seen;
  auto s = wire.NewStream(SchemaRequest(), [&](std::string_view t) { seen += t; });
  std::string preamble =
      AnthropicEvent("message_start",
                     {{"message", {{"model", "claude-y"}, {"usage", {{"input_tokens", 20}}}}}}) +
      AnthropicEvent("ping", json::object());
  ASSERT_TRUE(s->Consume(preamble));
  EXPECT_FALSE(s->produced_output());
  std::string body =
      AnthropicEvent("content_block_start",
                     {{"index", 0}, {"content_block", {{"type", "text"}, {"text", ""}}}}) +
      AnthropicEvent("content_block_delta",
                     {{"index", 0}, {"delta", {{"type", "text_delta"}, {"text", "ok: "}}}}) +
      AnthropicEvent("content_block_stop", {{"index", 0}}) +
      AnthropicEvent(
          "content_block_start",
          {{"index", 1},
           {"content_block",
            {{"type", "tool_use"}, {"id", "t"}, {"name", "verdict"}, {"input", json::object()}}}}) +
      AnthropicEvent(
          "content_block_delta",
          {{"index", 1}, {"delta", {{"type", "input_json_delta"}, {"partial_json", "{\"ok\""}}}}) +
      AnthropicEvent(
          "content_block_delta",
          {{"index", 1}, {"delta", {{"type", "input_json_delta"}, {"partial_json", ": false}"}}}}) +
      AnthropicEvent("content_block_stop", {{"index", 1}}) +
      AnthropicEvent("message_delta", {{"delta", {{"stop_reason", "tool_use"}}},
                                       {"usage", {{"output_tokens", 9}}}}) +
      AnthropicEvent("message_stop", json::object());
  auto r = Stream(*s, body, 5);
  ASSERT_TRUE(r.ok()) << r.error().Describe();
  EXPECT_EQ(json::parse(r->text), json({{"ok", false}}));
  EXPECT_EQ(seen, "ok: ");
  EXPECT_EQ(r->model, "claude-y");
  EXPECT_EQ(r->usage.input_tokens, 20);
  EXPECT_EQ(r->usage.output_tokens, 9);
  EXPECT_TRUE(r->tool_calls.empty());
}

TEST(AnthropicWire, StreamWithoutMessageStopIsTruncatedAndErrorEventsFail) {
  AnthropicWire wire(MakeEndpoint("http://x"));
  auto s = wire.NewStream({}, {});
  auto r = Stream(
      *s, AnthropicEvent("message_start", {{"message", json::object()}}) +
              AnthropicEvent("content_block_delta",
                             {{"index", 0}, {"delta", {{"type", "text_delta"}, {"text", "a"}}}}));
  EXPECT_EQ(r.error().kind, LlmErrorKind::kTruncatedStream);
  auto e = wire.NewStream({}, {});
  auto r2 = Stream(
      *e, AnthropicEvent("error",
                         {{"error", {{"type", "overloaded_error"}, {"message", "Overloaded"}}}}));
  EXPECT_EQ(r2.error().kind, LlmErrorKind::kServer);
  EXPECT_NE(r2.error().message.find("Overloaded"), std::string::npos);
}

TEST(ErrorBodyMessage, ReadsTheShapesServersUse) {
  EXPECT_EQ(ErrorBodyMessage(R"({"error":{"message":"bad key","type":"invalid_request_error"}})"),
            "invalid_request_error: bad key");
  EXPECT_EQ(ErrorBodyMessage(R"({"error":"model not found"})"), "model not found");
  EXPECT_EQ(ErrorBodyMessage(R"({"object":"error","message":"too long"})"), "too long");
  EXPECT_EQ(ErrorBodyMessage(R"({"detail":"Not Found"})"), "Not Found");
  EXPECT_EQ(ErrorBodyMessage("<html>502</html>\n"), "<html>502</html>");
  EXPECT_EQ(ErrorBodyMessage(""), "(empty body)");
  EXPECT_LT(ErrorBodyMessage(std::string(5000, 'x')).size(), 500u);
}

}  // namespace
}  // namespace kforge::llm
