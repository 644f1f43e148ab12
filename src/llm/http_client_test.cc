// HttpChatClient against the fake server speaking the real wire formats:
// streams, error bodies, rate limits, slow and cut streams, garbage, resets,
// concurrency limits.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "llm/client_factory.h"
#include "llm/fake_llm_server.h"

namespace kforge::llm {
namespace {

using nlohmann::json;
using testing::FakeLlmServer;
using Clock = std::chrono::steady_clock;

double SecondsSince(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

class HttpClientTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    auto started = FakeLlmServer::Start();
    if (started)
      server_ = std::move(started).value();
    else
      start_error_ = started.error().message;
  }
  static void TearDownTestSuite() { server_.reset(); }
  void SetUp() override {
    ASSERT_NE(server_, nullptr) << start_error_;
    ASSERT_TRUE(server_->Reset().ok());
  }

  // Millisecond back-off so retries cost little time.
  static LlmSettings Fast() {
    LlmSettings s;
    s.retry.max_attempts = 3;
    s.retry.base_delay_ms = 5;
    s.retry.max_delay_ms = 20;
    s.timeouts = {2000, 5000, 5000, 20000};
    s.openai.api_key = "";
    s.anthropic.api_key = "";
    return s;
  }

  std::unique_ptr<LlmClient> Make(const std::string& spec, LlmSettings settings = Fast(),
                                  std::shared_ptr<HttpTransport> transport = nullptr) {
    factory_ = std::make_unique<ClientFactory>(std::move(settings), std::move(transport), nullptr);
    auto client = factory_->Make(spec);
    EXPECT_TRUE(client.ok()) << client.error().Describe();
    return client.ok() ? std::move(client).value() : nullptr;
  }

  static LlmRequest Hello() {
    LlmRequest r;
    r.stage = "test";
    r.messages = {ChatMessage::System("be brief"), ChatMessage::User("hello")};
    return r;
  }

  void Script(const json& behaviours) { ASSERT_TRUE(server_->Script(behaviours).ok()); }
  std::vector<json> Requests() {
    auto r = server_->Requests();
    EXPECT_TRUE(r.ok());
    return r.ok() ? r.value() : std::vector<json>{};
  }

  static std::unique_ptr<FakeLlmServer> server_;
  static std::string start_error_;
  std::unique_ptr<ClientFactory> factory_;
};

std::unique_ptr<FakeLlmServer> HttpClientTest::server_;
std::string HttpClientTest::start_error_;

TEST_F(HttpClientTest, OpenAiStreamWithUsageInTheFinalChunk) {
  Script({{{"kind", "sse"},
           {"chunks", {"Hel", "lo, ", "world"}},
           {"model", "served-name"},
           {"usage", {{"input_tokens", 21}, {"output_tokens", 4}}}}});
  LlmSettings s = Fast();
  s.openai.api_key = "sk-test-secret";
  auto client = Make(server_->OpenAiSpec("m1"), s);
  std::string streamed;
  auto r = client->Complete(Hello(), [&](std::string_view t) { streamed += t; });
  ASSERT_TRUE(r.ok()) << r.error().Describe();
  EXPECT_EQ(r->text, "Hello, world");
  EXPECT_EQ(streamed, "Hello, world");
  EXPECT_EQ(r->model, "served-name");
  EXPECT_EQ(r->usage.input_tokens, 21);
  EXPECT_EQ(r->usage.output_tokens, 4);
  EXPECT_EQ(r->finish_reason, "stop");
  EXPECT_EQ(r->attempts, 1);
  EXPECT_GT(r->first_token_ms, 0);
  auto requests = Requests();
  ASSERT_EQ(requests.size(), 1u);
  EXPECT_EQ(requests[0]["path"], "/v1/chat/completions");
  EXPECT_EQ(requests[0]["headers"]["authorization"], "Bearer sk-test-secret");
  const json& body = requests[0]["body"];
  EXPECT_EQ(body["model"], "m1");
  EXPECT_EQ(body["stream"], true);
  EXPECT_EQ(body["stream_options"]["include_usage"], true);
  EXPECT_EQ(body["messages"][1]["content"], "hello");
}

TEST_F(HttpClientTest, OpenAiWithoutStreaming) {
  Script({{{"kind", "reply"},
           {"text", "whole answer"},
           {"usage", {{"input_tokens", 3}, {"output_tokens", 2}}}}});
  LlmSettings s = Fast();
  s.stream = false;
  auto r = Make(server_->OpenAiSpec("m1"), s)->Complete(Hello());
  ASSERT_TRUE(r.ok()) << r.error().Describe();
  EXPECT_EQ(r->text, "whole answer");
  EXPECT_EQ(r->usage.output_tokens, 2);
  EXPECT_EQ(Requests()[0]["body"]["stream"], false);
}

TEST_F(HttpClientTest, StreamRequestAnsweredWithPlainJsonStillWorks) {
  Script({{{"kind", "reply"}, {"text", "not streamed"}, {"stream", false}}});
  auto r = Make(server_->OpenAiSpec("m1"))->Complete(Hello());
  ASSERT_TRUE(r.ok()) << r.error().Describe();
  EXPECT_EQ(r->text, "not streamed");
}

TEST_F(HttpClientTest, AnthropicStreamAndWhole) {
  Script({{{"kind", "reply"},
           {"text", "streamed reply"},
           {"usage", {{"input_tokens", 7}, {"output_tokens", 3}}}},
          {{"kind", "reply"}, {"text", "whole reply"}}});
  LlmSettings s = Fast();
  s.anthropic.api_key = "ak-secret";
  auto client = Make(server_->AnthropicSpec("claude-test"), s);
  auto r = client->Complete(Hello());
  ASSERT_TRUE(r.ok()) << r.error().Describe();
  EXPECT_EQ(r->text, "streamed reply");
  EXPECT_EQ(r->usage.input_tokens, 7);
  EXPECT_EQ(r->usage.output_tokens, 3);
  EXPECT_EQ(r->finish_reason, "stop");
  s.stream = false;
  auto whole = Make(server_->AnthropicSpec("claude-test"), s)->Complete(Hello());
  ASSERT_TRUE(whole.ok()) << whole.error().Describe();
  EXPECT_EQ(whole->text, "whole reply");
  auto requests = Requests();
  ASSERT_EQ(requests.size(), 2u);
  EXPECT_EQ(requests[0]["path"], "/v1/messages");
  EXPECT_EQ(requests[0]["headers"]["x-api-key"], "ak-secret");
  EXPECT_EQ(requests[0]["headers"]["anthropic-version"], "2023-06-01");
  EXPECT_EQ(requests[0]["body"]["system"], "be brief");
  EXPECT_EQ(requests[0]["body"]["stream"], true);
  EXPECT_EQ(requests[1]["body"]["stream"], false);
}

TEST_F(HttpClientTest, ToolCallsComeBackInBothFormats) {
  json call = {{"id", "call_7"}, {"name", "compile"}, {"arguments", R"({"path":"k.cu","opt":3})"}};
  Script({{{"kind", "reply"}, {"text", ""}, {"tool_calls", {call}}},
          {{"kind", "reply"}, {"text", "checking"}, {"tool_calls", {call}}}});
  LlmRequest req = Hello();
  req.tools = {{"compile", "Compile", json{{"type", "object"}}}};
  auto openai = Make(server_->OpenAiSpec("m"))->Complete(req);
  ASSERT_TRUE(openai.ok()) << openai.error().Describe();
  ASSERT_EQ(openai->tool_calls.size(), 1u);
  EXPECT_EQ(openai->tool_calls[0].id, "call_7");
  EXPECT_EQ(json::parse(openai->tool_calls[0].arguments_json)["opt"], 3);
  EXPECT_EQ(openai->finish_reason, "tool_calls");
  auto anthropic = Make(server_->AnthropicSpec("c"))->Complete(req);
  ASSERT_TRUE(anthropic.ok()) << anthropic.error().Describe();
  EXPECT_EQ(anthropic->text, "checking");
  ASSERT_EQ(anthropic->tool_calls.size(), 1u);
  EXPECT_EQ(anthropic->tool_calls[0].name, "compile");
  EXPECT_EQ(json::parse(anthropic->tool_calls[0].arguments_json)["path"], "k.cu");
}

TEST_F(HttpClientTest, ErrorBodiesAreReportedWithoutRetrying) {
  Script({{{"kind", "status"}, {"code", 400}, {"message", "context_length_exceeded: too long"}},
          {{"kind", "status"}, {"code", 401}, {"message", "Incorrect API key"}}});
  auto client = Make(server_->OpenAiSpec("m"));
  auto bad = client->Complete(Hello());
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().kind, LlmErrorKind::kBadRequest);
  EXPECT_EQ(bad.error().http_status, 400);
  EXPECT_NE(bad.error().message.find("context_length_exceeded: too long"), std::string::npos);
  auto auth = client->Complete(Hello());
  EXPECT_EQ(auth.error().kind, LlmErrorKind::kAuth);
  EXPECT_NE(auth.error().message.find("Incorrect API key"), std::string::npos);
  EXPECT_EQ(Requests().size(), 2u);  // one attempt each
}

TEST_F(HttpClientTest, ServerErrorsAreRetriedThenReported) {
  Script({{{"kind", "status"}, {"code", 503}},
          {{"kind", "status"}, {"code", 502}},
          {{"kind", "status"}, {"code", 500}, {"message", "still broken"}}});
  auto r = Make(server_->AnthropicSpec("c"))->Complete(Hello());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().kind, LlmErrorKind::kServer);
  EXPECT_EQ(r.error().attempts, 3);
  EXPECT_NE(r.error().message.find("still broken"), std::string::npos);
  EXPECT_NE(r.error().message.find("after 3 attempts"), std::string::npos);
  EXPECT_EQ(Requests().size(), 3u);
}

TEST_F(HttpClientTest, RateLimitHonoursRetryAfter) {
  Script({{{"kind", "status"}, {"code", 429}, {"headers", {{"Retry-After", "1"}}}},
          {{"kind", "sse"}, {"text", "after the wait"}}});
  auto start = Clock::now();
  auto r = Make(server_->OpenAiSpec("m"))->Complete(Hello());
  double waited = SecondsSince(start);
  ASSERT_TRUE(r.ok()) << r.error().Describe();
  EXPECT_EQ(r->text, "after the wait");
  EXPECT_EQ(r->attempts, 2);
  EXPECT_GE(waited, 0.95);  // the back-off alone would be 5 ms
  EXPECT_LT(waited, 5.0);
}

TEST_F(HttpClientTest, SlowFirstTokenTimesOutAndIsRetried) {
  // The stream opens at once (headers and the role preamble) but its first
  // token comes late: bytes arrived, yet no output.
  Script({{{"kind", "sse"}, {"text", "too late"}, {"delay_first_token_ms", 4000}},
          {{"kind", "sse"}, {"text", "in time"}}});
  LlmSettings s = Fast();
  s.timeouts.first_token_ms = 300;
  auto start = Clock::now();
  auto r = Make(server_->OpenAiSpec("m"), s)->Complete(Hello());
  ASSERT_TRUE(r.ok()) << r.error().Describe();
  EXPECT_EQ(r->text, "in time");
  EXPECT_EQ(r->attempts, 2);
  EXPECT_LT(SecondsSince(start), 3.0);

  Script({{{"kind", "sse"}, {"text", "too late"}, {"delay_first_token_ms", 4000}}});
  s.retry.max_attempts = 1;
  auto failed = Make(server_->AnthropicSpec("c"), s)->Complete(Hello());
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.error().kind, LlmErrorKind::kTimeout);
  EXPECT_NE(failed.error().message.find("first-token timeout (300 ms)"), std::string::npos)
      << failed.error().message;
}

TEST_F(HttpClientTest, ASlowFirstTokenWithinTheDeadlineIsFine) {
  Script({{{"kind", "sse"}, {"text", "patience"}, {"delay_first_token_ms", 300}}});
  auto r = Make(server_->OpenAiSpec("m"))->Complete(Hello());
  ASSERT_TRUE(r.ok()) << r.error().Describe();
  EXPECT_EQ(r->text, "patience");
  EXPECT_GE(r->first_token_ms, 250);
}

TEST_F(HttpClientTest, IdleAndTotalDeadlines) {
  LlmSettings s = Fast();
  s.retry.max_attempts = 1;
  s.timeouts.idle_ms = 300;
  Script({{{"kind", "sse"}, {"chunks", {"a", "b"}}, {"chunk_delay_ms", 4000}}});
  auto idle = Make(server_->OpenAiSpec("m"), s)->Complete(Hello());
  ASSERT_FALSE(idle.ok());
  EXPECT_EQ(idle.error().kind, LlmErrorKind::kTimeout);
  EXPECT_NE(idle.error().message.find("idle timeout"), std::string::npos) << idle.error().message;

  s.stream = false;
  s.timeouts.total_ms = 400;
  Script({{{"kind", "reply"}, {"text", "slow"}, {"delay_first_token_ms", 3000}}});
  auto total = Make(server_->OpenAiSpec("m"), s)->Complete(Hello());
  ASSERT_FALSE(total.ok());
  EXPECT_EQ(total.error().kind, LlmErrorKind::kTimeout);
  EXPECT_NE(total.error().message.find("total timeout (400 ms"), std::string::npos)
      << total.error().message;
}

TEST_F(HttpClientTest, TruncatedStreamIsRetriedAsAWholeRequest) {
  Script({{{"kind", "sse"}, {"text", "the first half and then"}, {"truncate_after", 1}},
          {{"kind", "sse"}, {"text", "complete"}}});
  auto r = Make(server_->OpenAiSpec("m"))->Complete(Hello());
  ASSERT_TRUE(r.ok()) << r.error().Describe();
  EXPECT_EQ(r->text, "complete");  // nothing of the cut attempt leaks in
  EXPECT_EQ(r->attempts, 2);

  LlmSettings s = Fast();
  s.retry.max_attempts = 1;
  Script({{{"kind", "sse"}, {"text", "cut short here"}, {"truncate_after", 2}}});
  auto cut = Make(server_->AnthropicSpec("c"), s)->Complete(Hello());
  ASSERT_FALSE(cut.ok());
  EXPECT_EQ(cut.error().kind, LlmErrorKind::kTruncatedStream);
  EXPECT_NE(cut.error().message.find("message_stop"), std::string::npos);
}

TEST_F(HttpClientTest, ConnectionResetMidStreamIsRetried) {
  Script({{{"kind", "sse"}, {"text", "about to vanish"}, {"drop_after", 1}},
          {{"kind", "drop"}},
          {{"kind", "sse"}, {"text", "third time lucky"}}});
  auto r = Make(server_->OpenAiSpec("m"))->Complete(Hello());
  ASSERT_TRUE(r.ok()) << r.error().Describe();
  EXPECT_EQ(r->text, "third time lucky");
  EXPECT_EQ(r->attempts, 3);
}

TEST_F(HttpClientTest, InvalidJsonIsRetriedThenReported) {
  Script({{{"kind", "json"}, {"body", "{\"choices\": [tru"}},
          {{"kind", "reply"}, {"text", "valid now"}, {"stream", false}}});
  LlmSettings s = Fast();
  s.stream = false;
  auto r = Make(server_->OpenAiSpec("m"), s)->Complete(Hello());
  ASSERT_TRUE(r.ok()) << r.error().Describe();
  EXPECT_EQ(r->text, "valid now");
  EXPECT_EQ(r->attempts, 2);

  s.retry.max_attempts = 2;
  Script({{{"kind", "json"}, {"body", "<html>oops</html>"}},
          {{"kind", "raw_sse"}, {"events", {"data: {\"choices\": [{\"delta\": \n\n"}}}});
  auto bad = Make(server_->OpenAiSpec("m"), s)->Complete(Hello());
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().kind, LlmErrorKind::kMalformedResponse);
}

TEST_F(HttpClientTest, ErrorEventInsideAStreamIsRetried) {
  Script({{{"kind", "raw_sse"},
           {"events",
            {"event: message_start\ndata: {\"type\":\"message_start\",\"message\":{}}\n\n",
             "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\","
             "\"message\":\"Overloaded\"}}\n\n"}}},
          {{"kind", "sse"}, {"text", "recovered"}}});
  auto r = Make(server_->AnthropicSpec("c"))->Complete(Hello());
  ASSERT_TRUE(r.ok()) << r.error().Describe();
  EXPECT_EQ(r->text, "recovered");
  EXPECT_EQ(r->attempts, 2);
}

TEST_F(HttpClientTest, UnreachableServerIsANetworkError) {
  // A port that was just free: nothing listens there.
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  socklen_t len = sizeof(addr);
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  int port = ntohs(addr.sin_port);
  ::close(fd);
  auto r = Make("openai:m@http://127.0.0.1:" + std::to_string(port) + "/v1")->Complete(Hello());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().kind, LlmErrorKind::kNetwork);
  EXPECT_EQ(r.error().attempts, 3);
}

// Counts requests in flight at the transport.
class CountingTransport : public HttpTransport {
 public:
  LlmResult<HttpResponse> Send(const HttpRequest& request, StreamSink* sink) override {
    int now = ++in_flight_;
    int seen = peak_.load();
    while (now > seen && !peak_.compare_exchange_weak(seen, now)) {
    }
    auto r = inner_.Send(request, sink);
    --in_flight_;
    return r;
  }
  int peak() const { return peak_.load(); }

 private:
  CurlTransport inner_;
  std::atomic<int> in_flight_{0};
  std::atomic<int> peak_{0};
};

TEST_F(HttpClientTest, ConcurrencyIsLimitedPerEndpointAcrossClients) {
  json slow = {{"kind", "sse"}, {"chunks", {"a", "b", "c"}}, {"chunk_delay_ms", 100}};
  Script(json::array({slow, slow, slow, slow, slow, slow}));
  LlmSettings s = Fast();
  s.openai.max_concurrency = 2;
  auto transport = std::make_shared<CountingTransport>();
  ClientFactory factory(s, transport, nullptr);
  auto a = factory.Make(server_->OpenAiSpec("m1"));
  auto b = factory.Make(server_->OpenAiSpec("m2"));  // same endpoint, other model
  ASSERT_TRUE(a.ok() && b.ok());
  std::atomic<int> ok{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < 6; ++i) {
    LlmClient* c = i % 2 == 0 ? a->get() : b->get();
    threads.emplace_back([c, &ok] {
      if (c->Complete(Hello()).ok()) ++ok;
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(ok.load(), 6);
  EXPECT_EQ(transport->peak(), 2);
}

}  // namespace
}  // namespace kforge::llm
