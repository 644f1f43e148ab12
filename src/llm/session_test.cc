// LlmSession end to end against the fake server: structured output with
// schema retries, code extraction, budgets, resume, per-stage models, the
// context-window guard, and replay of a recorded run.
#include "llm/llm_session.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <thread>

#include "llm/fake_llm_server.h"

namespace kforge::llm {
namespace {

using nlohmann::json;
using testing::FakeLlmServer;
namespace fs = std::filesystem;

const json kVerdictSchema = json::parse(R"({
  "type": "object",
  "properties": {
    "state": {"enum": ["memory_bound", "compute_bound", "latency_bound"]},
    "confidence": {"type": "number", "minimum": 0, "maximum": 1}
  },
  "required": ["state", "confidence"],
  "additionalProperties": false
})");

OutputSchema Verdict() {
  return {"verdict", "The performance state", kVerdictSchema};
}

Prompt Simple(const std::string& text) {
  Prompt p;
  p.System("role", "You are a CUDA expert.").Text("task", text);
  return p;
}

class SessionTest : public ::testing::Test {
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
    dir_ = fs::temp_directory_path() / ("kforge-session-" + NewCallId());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  static LlmSettings Fast() {
    LlmSettings s;
    s.retry.max_attempts = 2;
    s.retry.base_delay_ms = 5;
    s.retry.max_delay_ms = 20;
    s.timeouts = {2000, 5000, 5000, 20000};
    s.openai.api_key = "";
    s.anthropic.api_key = "";
    return s;
  }

  std::unique_ptr<LlmSession> Open(const std::string& spec, const std::string& run_id,
                                   LlmCallLog& log, LlmSettings settings = Fast()) {
    auto session = LlmSession::Open(std::move(settings), {run_id, spec, &log, nullptr, nullptr});
    EXPECT_TRUE(session.ok()) << session.error().Describe();
    return session.ok() ? std::move(session).value() : nullptr;
  }

  void Script(const json& behaviours) { ASSERT_TRUE(server_->Script(behaviours).ok()); }
  std::vector<json> Requests() {
    auto r = server_->Requests();
    EXPECT_TRUE(r.ok());
    return r.ok() ? r.value() : std::vector<json>{};
  }
  static json Reply(const std::string& text) { return {{"kind", "reply"}, {"text", text}}; }

  static std::unique_ptr<FakeLlmServer> server_;
  static std::string start_error_;
  fs::path dir_;
};

std::unique_ptr<FakeLlmServer> SessionTest::server_;
std::string SessionTest::start_error_;

TEST_F(SessionTest, StructuredOutputAsksWithResponseFormatAndValidates) {
  Script({Reply(R"({"state": "memory_bound", "confidence": 0.9})")});
  MemoryCallLog log;
  auto session = Open(server_->OpenAiSpec("m"), "run-s1", log);
  auto r = session->AskStructured("classify", Simple("Which state?"), Verdict());
  ASSERT_TRUE(r.ok()) << r.error().Describe();
  EXPECT_EQ(r->value["state"], "memory_bound");
  EXPECT_EQ(r->attempts, 1);
  json body = Requests()[0]["body"];
  EXPECT_EQ(body["response_format"]["type"], "json_schema");
  EXPECT_EQ(body["response_format"]["json_schema"]["name"], "verdict");
  EXPECT_EQ(body["response_format"]["json_schema"]["strict"], true);
  EXPECT_EQ(body["response_format"]["json_schema"]["schema"], kVerdictSchema);
  auto records = log.LoadRun("run-s1");
  ASSERT_EQ(records->size(), 1u);
  EXPECT_EQ((*records)[0].status, "ok");
  EXPECT_EQ((*records)[0].stage, "classify");
  EXPECT_EQ((*records)[0].seq, 1);
  EXPECT_EQ((*records)[0].request_hash.size(), 64u);
}

TEST_F(SessionTest, ReplyViolatingItsSchemaIsRetriedWithTheViolations) {
  Script({Reply(R"({"state": "fast", "confidence": 2})"),
          Reply(R"({"state": "compute_bound", "confidence": 0.4})")});
  MemoryCallLog log;
  auto session = Open(server_->OpenAiSpec("m"), "run-s2", log);
  auto r = session->AskStructured("classify", Simple("Which state?"), Verdict());
  ASSERT_TRUE(r.ok()) << r.error().Describe();
  EXPECT_EQ(r->value["state"], "compute_bound");
  EXPECT_EQ(r->attempts, 2);
  auto requests = Requests();
  ASSERT_EQ(requests.size(), 2u);
  const json& retry_messages = requests[1]["body"]["messages"];
  ASSERT_EQ(retry_messages.size(), 4u);  // system, user, the bad reply, the correction
  EXPECT_EQ(retry_messages[2]["role"], "assistant");
  EXPECT_EQ(retry_messages[2]["content"], R"({"state": "fast", "confidence": 2})");
  std::string correction = retry_messages[3]["content"];
  EXPECT_NE(correction.find("/state"), std::string::npos) << correction;
  EXPECT_NE(correction.find("/confidence: 2 is above the maximum 1"), std::string::npos);
  auto records = log.LoadRun("run-s2");
  ASSERT_EQ(records->size(), 2u);
  EXPECT_EQ((*records)[0].status, "failed");
  EXPECT_EQ((*records)[0].error.rfind("schema_violation: ", 0), 0u);
  EXPECT_FALSE((*records)[0].response_json.empty());  // the bad answer is kept
  EXPECT_EQ((*records)[1].status, "ok");
}

TEST_F(SessionTest, InvalidStructuredRepliesEndInARecordedFailureNotACrash) {
  Script({Reply("I think it is memory bound."), Reply(R"({"state": "memory_bound"})"),
          Reply("{\"state\": ")});
  MemoryCallLog log;
  LlmSettings s = Fast();
  s.structured_max_attempts = 3;
  auto session = Open(server_->OpenAiSpec("m"), "run-s3", log, s);
  auto r = session->AskStructured("classify", Simple("Which state?"), Verdict());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().kind, LlmErrorKind::kSchemaViolation);
  EXPECT_NE(r.error().message.find("after 3 attempts"), std::string::npos);
  EXPECT_NE(r.error().message.find("not JSON"), std::string::npos);
  auto records = log.LoadRun("run-s3");
  ASSERT_EQ(records->size(), 3u);
  for (const auto& rec : *records) EXPECT_EQ(rec.status, "failed");
  EXPECT_NE((*records)[1].error.find("missing required property 'confidence'"), std::string::npos);
}

TEST_F(SessionTest, AnthropicStructuredOutputIsAForcedTool) {
  Script({Reply(R"({"state": "latency_bound", "confidence": 0.7})"),
          {{"kind", "reply"},
           {"text", R"({"state": "memory_bound", "confidence": 0.1})"},
           {"stream", false}}});
  MemoryCallLog log;
  auto session = Open(server_->AnthropicSpec("claude-t"), "run-s4", log);
  auto streamed = session->AskStructured("classify", Simple("Which?"), Verdict());
  ASSERT_TRUE(streamed.ok()) << streamed.error().Describe();
  EXPECT_EQ(streamed->value["state"], "latency_bound");
  auto whole = session->AskStructured("classify", Simple("Which?"), Verdict());
  ASSERT_TRUE(whole.ok()) << whole.error().Describe();
  EXPECT_EQ(whole->value["confidence"], 0.1);
  json body = Requests()[0]["body"];
  EXPECT_EQ(body["tool_choice"], json({{"type", "tool"}, {"name", "verdict"}}));
  EXPECT_EQ(body["tools"][0]["input_schema"], kVerdictSchema);
}

TEST_F(SessionTest, UnsupportedSchemaIsRefusedBeforeAnyCall) {
  MemoryCallLog log;
  auto session = Open(server_->OpenAiSpec("m"), "run-s5", log);
  OutputSchema bad{"x", "", json{{"type", "string"}, {"format", "email"}}};
  auto r = session->AskStructured("classify", Simple("?"), bad);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().kind, LlmErrorKind::kBadSpec);
  EXPECT_TRUE(Requests().empty());
}

TEST_F(SessionTest, CodeStagesTakeTheLastFencedBlock) {
  Script({Reply("Analysis.\n```python\nold()\n```\nFinal:\n```python\nclass ModelNew: pass\n```\n"),
          Reply("I would rather explain in words.")});
  MemoryCallLog log;
  auto session = Open(server_->OpenAiSpec("m"), "run-c", log);
  auto code = session->AskForCode("propose", Simple("Write it"), {"python"});
  ASSERT_TRUE(code.ok()) << code.error().Describe();
  EXPECT_EQ(code->code.code, "class ModelNew: pass\n");
  EXPECT_EQ(code->response.call_seq, 1);
  auto none = session->AskForCode("propose", Simple("Write it"), {"python"});
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.error().kind, LlmErrorKind::kNoCodeBlock);
  auto records = log.LoadRun("run-c");
  ASSERT_EQ(records->size(), 2u);
  EXPECT_EQ((*records)[1].status, "failed");
  EXPECT_EQ((*records)[1].text, "I would rather explain in words.");
}

TEST_F(SessionTest, TokenBudgetReachedMidRunStopsCleanly) {
  json used = {{"input_tokens", 50}, {"output_tokens", 50}};
  Script({{{"kind", "reply"}, {"text", "one"}, {"usage", used}},
          {{"kind", "reply"}, {"text", "two"}, {"usage", used}},
          {{"kind", "reply"}, {"text", "never sent"}, {"usage", used}}});
  MemoryCallLog log;
  LlmSettings s = Fast();
  s.budget.max_tokens = 150;
  auto session = Open(server_->OpenAiSpec("m"), "run-b", log, s);
  ASSERT_TRUE(session->Ask("propose", Simple("1")).ok());
  ASSERT_TRUE(session->Ask("propose", Simple("2")).ok());  // 100 < 150: allowed, ends at 200
  auto third = session->Ask("propose", Simple("3"));
  ASSERT_FALSE(third.ok());
  EXPECT_EQ(third.error().kind, LlmErrorKind::kBudgetExhausted);
  EXPECT_NE(third.error().message.find("tokens (200 of 150)"), std::string::npos);
  EXPECT_EQ(Requests().size(), 2u);
  EXPECT_EQ(log.LoadRun("run-b")->size(), 2u);  // a refused call leaves no record
  EXPECT_EQ(session->spend().input_tokens, 100);
  EXPECT_EQ(session->spend().calls, 2);
}

TEST_F(SessionTest, CostIsPricedAndCappedInDollars) {
  json used = {{"input_tokens", 1000}, {"output_tokens", 500}};
  Script({{{"kind", "reply"}, {"text", "a"}, {"usage", used}},
          {{"kind", "reply"}, {"text", "b"}, {"usage", used}}});
  MemoryCallLog log;
  LlmSettings s = Fast();
  s.prices.Set("priced-model", {100.0, 200.0});  // $0.1 + $0.1 per call here
  s.budget.max_usd = 0.3;
  auto session = Open(server_->OpenAiSpec("priced-model"), "run-usd", log, s);
  auto a = session->Ask("propose", Simple("x"));
  ASSERT_TRUE(a.ok()) << a.error().Describe();
  EXPECT_NEAR(a->cost_usd, 0.2, 1e-9);
  ASSERT_TRUE(session->Ask("propose", Simple("y")).ok());
  EXPECT_EQ(session->Ask("propose", Simple("z")).error().kind, LlmErrorKind::kBudgetExhausted);
  EXPECT_NEAR((*log.LoadRun("run-usd"))[1].cost_usd, 0.2, 1e-9);
  EXPECT_NEAR(session->spend().cost_usd, 0.4, 1e-9);
}

TEST_F(SessionTest, ResumedSessionContinuesNumberingAndSpending) {
  MemoryCallLog log;
  LlmSettings s = Fast();
  s.budget.max_calls = 3;
  {
    auto first = Open(server_->OpenAiSpec("m"), "run-r", log, s);
    ASSERT_TRUE(first->Ask("propose", Simple("a")).ok());
    ASSERT_TRUE(first->Ask("propose", Simple("b")).ok());
  }
  auto resumed = Open(server_->OpenAiSpec("m"), "run-r", log, s);
  EXPECT_EQ(resumed->spend().calls, 2);
  auto third = resumed->Ask("propose", Simple("c"));
  ASSERT_TRUE(third.ok());
  EXPECT_EQ(third->call_seq, 3);
  EXPECT_EQ(resumed->Ask("propose", Simple("d")).error().kind, LlmErrorKind::kBudgetExhausted);
}

TEST_F(SessionTest, EachStageUsesItsConfiguredModel) {
  MemoryCallLog log;
  LlmSettings s = Fast();
  s.stage_specs["classify"] = server_->OpenAiSpec("cheap-model");
  auto session = Open(server_->OpenAiSpec("big-model"), "run-st", log, s);
  ASSERT_TRUE(session->Ask("classify", Simple("x")).ok());
  ASSERT_TRUE(session->Ask("propose", Simple("y")).ok());
  auto requests = Requests();
  ASSERT_EQ(requests.size(), 2u);
  EXPECT_EQ(requests[0]["body"]["model"], "cheap-model");
  EXPECT_EQ(requests[1]["body"]["model"], "big-model");
  auto records = log.LoadRun("run-st");
  EXPECT_NE((*records)[0].model_spec.find("cheap-model"), std::string::npos);
}

TEST_F(SessionTest, ContextGuardTrimsOldHistoryBeforeTheWindowOverflows) {
  MemoryCallLog log;
  LlmSettings s = Fast();
  s.context_windows["small-model"] = 1000;
  s.max_output_tokens = 200;  // the prompt may use 1000 - 200 - 100 = 700 tokens
  auto session = Open(server_->OpenAiSpec("small-model"), "run-ctx", log, s);
  std::vector<std::string> history;
  for (char c = 'a'; c <= 'f'; ++c) history.push_back(std::string(600, c));  // ~150 tokens each
  Prompt p;
  p.System("role", "You optimize kernels.").Text("task", "Make softmax fast.");
  p.History("history", "Earlier attempts", history, 10);
  auto r = session->Ask("propose", p);
  ASSERT_TRUE(r.ok()) << r.error().Describe();
  ASSERT_FALSE(r->prompt_trims.empty());
  EXPECT_EQ(r->prompt_trims[0], "history: dropped 2 oldest items");
  std::string sent = Requests()[0]["body"]["messages"][1]["content"];
  EXPECT_EQ(sent.find(std::string(600, 'a')), std::string::npos);
  EXPECT_EQ(sent.find(std::string(600, 'b')), std::string::npos);
  EXPECT_NE(sent.find(std::string(600, 'f')), std::string::npos);
  EXPECT_NE(sent.find("Make softmax fast."), std::string::npos);
  EXPECT_EQ(Requests()[0]["body"]["max_tokens"], 200);

  Prompt huge;
  huge.Text("task", std::string(4000, 'x'));
  auto overflow = session->Ask("propose", huge);
  ASSERT_FALSE(overflow.ok());
  EXPECT_EQ(overflow.error().kind, LlmErrorKind::kContextOverflow);
  EXPECT_NE(overflow.error().message.find("window 1000 tokens"), std::string::npos);
}

TEST_F(SessionTest, ConcurrentCallsGetDistinctSequenceNumbers) {
  MemoryCallLog log;
  auto session = Open(server_->OpenAiSpec("m"), "run-par", log);
  std::vector<std::thread> threads;
  for (int i = 0; i < 8; ++i) {
    threads.emplace_back([&, i] { (void)session->Ask("propose", Simple(std::to_string(i))); });
  }
  for (auto& t : threads) t.join();
  auto records = log.LoadRun("run-par");
  ASSERT_EQ(records->size(), 8u);
  std::set<int64_t> seqs;
  for (const auto& r : *records) {
    EXPECT_EQ(r.status, "ok");
    seqs.insert(r.seq);
  }
  EXPECT_EQ(seqs, std::set<int64_t>({1, 2, 3, 4, 5, 6, 7, 8}));
}

TEST_F(SessionTest, OpenRefusesBadSpecsAndMissingKeys) {
  MemoryCallLog log;
  auto bad = LlmSession::Open(Fast(), {"r", "gpt-4o", &log, nullptr, nullptr});
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().kind, LlmErrorKind::kBadSpec);
  EXPECT_EQ(bad.error().ToError().kind, ErrorKind::kBadInput);

  LlmSettings staged = Fast();
  staged.stage_specs["classify"] = "openai:";
  auto stage = LlmSession::Open(staged, {"r", server_->OpenAiSpec("m"), &log, nullptr, nullptr});
  ASSERT_FALSE(stage.ok());
  EXPECT_NE(stage.error().message.find("llm.stage.classify"), std::string::npos);

  auto hosted =
      LlmSession::Open(Fast(), {"r", "anthropic:claude-sonnet-4", &log, nullptr, nullptr});
  ASSERT_FALSE(hosted.ok());
  EXPECT_EQ(hosted.error().kind, LlmErrorKind::kAuth);
  EXPECT_NE(hosted.error().message.find("ANTHROPIC_API_KEY"), std::string::npos);

  auto replay = LlmSession::Open(Fast(), {"r", "replay:no-such-run", &log, nullptr, nullptr});
  ASSERT_FALSE(replay.ok());
  EXPECT_NE(replay.error().message.find("no recorded LLM calls"), std::string::npos);

  auto none = LlmSession::Open(Fast(), {"r", "", &log, nullptr, nullptr});
  EXPECT_EQ(none.error().kind, LlmErrorKind::kBadSpec);
}

TEST_F(SessionTest, UnscriptedServerEchoesOrServesCannedReplies) {
  MemoryCallLog log;
  auto echo = Open(server_->OpenAiSpec("m"), "run-echo", log);
  auto echoed = echo->Ask("propose", Simple("ping"));
  ASSERT_TRUE(echoed.ok()) << echoed.error().Describe();
  EXPECT_EQ(echoed->text, "echo: ping");

  // The mode the lead's end-to-end runs use: canned replies by kind, cycling.
  fs::path replies = dir_ / "replies.jsonl";
  {
    std::ofstream out(replies);
    out << "\"first plain\"\n";
    out << R"({"schema": "verdict", "text": "{\"state\": \"memory_bound\", \"confidence\": 1}"})"
        << "\n";
    out << R"({"text": "```python\nclass ModelNew: pass\n```"})"
        << "\n";
    out << R"({"structured": true, "text": "{\"any\": 1}"})"
        << "\n";
  }
  auto canned = FakeLlmServer::Start(replies.string());
  ASSERT_TRUE(canned.ok()) << canned.error().message;
  auto session = Open((*canned)->OpenAiSpec("m"), "run-canned", log);
  EXPECT_EQ(session->Ask("summarize", Simple("a"))->text, "first plain");
  EXPECT_EQ(session->AskForCode("propose", Simple("b"), {"python"})->code.code,
            "class ModelNew: pass\n");
  EXPECT_EQ(session->Ask("summarize", Simple("c"))->text, "first plain");  // cycles
  auto verdict = session->AskStructured("classify", Simple("d"), Verdict());
  ASSERT_TRUE(verdict.ok()) << verdict.error().Describe();
  EXPECT_EQ(verdict->value["state"], "memory_bound");
  OutputSchema other{"other", "", json{{"type", "object"}}};
  auto generic = session->AskStructured("select", Simple("e"), other);
  ASSERT_TRUE(generic.ok()) << generic.error().Describe();
  EXPECT_EQ(generic->value, json({{"any", 1}}));
}

// Runs the same stages twice: once against the server (recording), once
// from the recording.
struct StageOutputs {
  std::string plain;
  std::string code;
  json structured;
  int structured_attempts = 0;
  std::string failure;
};

StageOutputs RunStages(LlmSession& session) {
  StageOutputs out;
  auto plain = session.Ask("summarize", Simple("Summarize the attempts."));
  if (plain) out.plain = plain->text;
  auto code = session.AskForCode("propose", Simple("Write the kernel."), {"python"});
  if (code) out.code = code->code.code;
  auto structured = session.AskStructured("classify", Simple("Which state?"), Verdict());
  if (structured) {
    out.structured = structured->value;
    out.structured_attempts = structured->attempts;
  }
  auto failed = session.Ask("summarize", Simple("One more."));
  if (!failed) out.failure = failed.error().message;
  return out;
}

TEST_F(SessionTest, ReplayOfARecordedRunGivesIdenticalTexts) {
  fs::path log_path = dir_ / "calls.jsonl";
  Script({Reply("Three attempts; tiling helped."),
          Reply("```python\nclass ModelNew:\n    pass\n```"),
          Reply(R"({"state": "unknown", "confidence": 0.5})"),
          Reply(R"({"state": "memory_bound", "confidence": 0.5})"),
          {{"kind", "status"}, {"code", 400}, {"message", "prompt rejected"}}});
  StageOutputs recorded;
  {
    JsonlCallLog log(log_path);
    auto session = Open(server_->OpenAiSpec("gpt-4o"), "rec-1", log);
    recorded = RunStages(*session);
  }
  EXPECT_EQ(recorded.plain, "Three attempts; tiling helped.");
  EXPECT_EQ(recorded.structured_attempts, 2);
  EXPECT_NE(recorded.failure.find("prompt rejected"), std::string::npos);
  size_t requests_before = Requests().size();
  EXPECT_EQ(requests_before, 5u);

  JsonlCallLog log(log_path);  // a fresh process would open it like this
  auto replay = Open("replay:rec-1", "rep-1", log);
  ASSERT_NE(replay, nullptr);
  StageOutputs replayed = RunStages(*replay);
  EXPECT_EQ(replayed.plain, recorded.plain);
  EXPECT_EQ(replayed.code, recorded.code);
  EXPECT_EQ(replayed.structured, recorded.structured);
  EXPECT_EQ(replayed.structured_attempts, recorded.structured_attempts);
  EXPECT_NE(replayed.failure.find("prompt rejected"), std::string::npos);
  EXPECT_EQ(Requests().size(), requests_before);  // nothing reached the server

  auto rep_records = log.LoadRun("rep-1");
  ASSERT_TRUE(rep_records.ok());
  ASSERT_EQ(rep_records->size(), 5u);
  auto rec_records = log.LoadRun("rec-1");
  for (size_t i = 0; i < 5; ++i) {
    EXPECT_EQ((*rep_records)[i].model_spec, "replay:rec-1");
    EXPECT_EQ((*rep_records)[i].request_hash, (*rec_records)[i].request_hash);
    EXPECT_EQ((*rep_records)[i].text, (*rec_records)[i].text);
    EXPECT_EQ((*rep_records)[i].cost_usd, 0.0);
  }
  auto exhausted = replay->Ask("summarize", Simple("Summarize the attempts."));
  EXPECT_EQ(exhausted.error().kind, LlmErrorKind::kReplayExhausted);
}

TEST_F(SessionTest, ReplayReportsDivergenceClearly) {
  MemoryCallLog log;
  Script({Reply("first"), Reply("second")});
  {
    auto session = Open(server_->OpenAiSpec("m"), "rec-2", log);
    ASSERT_TRUE(session->Ask("propose", Simple("original prompt")).ok());
    ASSERT_TRUE(session->Ask("classify", Simple("classify prompt")).ok());
  }
  auto strict = Open("replay:rec-2", "rep-2", log);
  auto diverged = strict->Ask("propose", Simple("a changed prompt"));
  ASSERT_FALSE(diverged.ok());
  EXPECT_EQ(diverged.error().kind, LlmErrorKind::kReplayDivergence);
  EXPECT_NE(diverged.error().message.find("diverged at stage 'propose'"), std::string::npos);
  EXPECT_NE(diverged.error().message.find("#1 (stage 'propose'"), std::string::npos)
      << diverged.error().message;
  auto wrong_stage = strict->Ask("summarize", Simple("original prompt"));
  EXPECT_EQ(wrong_stage.error().kind, LlmErrorKind::kReplayDivergence);

  LlmSettings lenient = Fast();
  lenient.replay_strict = false;
  auto loose = Open("replay:rec-2", "rep-3", log, lenient);
  auto served = loose->Ask("classify", Simple("a changed classify prompt"));
  ASSERT_TRUE(served.ok()) << served.error().Describe();
  EXPECT_EQ(served->text, "second");
}

}  // namespace
}  // namespace kforge::llm
