// An episode over HTTP: the fake LLM server (tests/fixtures/fake_llm_server.py)
// issues tool calls in the OpenAI and the Anthropic wire formats, and the
// tool results go back as each provider wants them (tool messages with the
// call's id; tool_result blocks in a user turn).
#include <gtest/gtest.h>

#include <filesystem>

#include "agent/agent_episode.h"
#include "common/files.h"
#include "llm/call_log.h"
#include "llm/fake_llm_server.h"
#include "llm/llm_session.h"

namespace kforge::agent {
namespace {

namespace fs = std::filesystem;
using llm::testing::FakeLlmServer;
using nlohmann::json;

// The turns through an LlmSession, as a run's model client sends them
// (run/agent_proposal.cc adds only the stop check).
class SessionAgentModel : public AgentModel {
 public:
  explicit SessionAgentModel(llm::LlmSession& session) : session_(session) {}
  llm::LlmResult<llm::LlmResponse> Turn(const llm::LlmRequest& request) override {
    return session_.Complete(request);
  }

 private:
  llm::LlmSession& session_;
};

class CountingChecker : public CandidateChecker {
 public:
  CheckReport Compile(const std::string& s) override {
    compiled.push_back(s);
    return {true, "built in 1.2 s", {{"compiled", true}}};
  }
  CheckReport Verify(const std::string&) override { return {true, "5 trials passed", {}}; }
  CheckReport Profile(const std::string&) override { return {true, "2.0x", {}}; }
  std::vector<std::string> compiled;
};

class SessionAgentModelTest : public ::testing::TestWithParam<std::string> {
 protected:
  static void SetUpTestSuite() {
    auto started = FakeLlmServer::Start();
    if (started) {
      server_ = std::move(started).value();
    } else {
      start_error_ = started.error().message;
    }
  }
  static void TearDownTestSuite() { server_.reset(); }
  void SetUp() override {
    ASSERT_NE(server_, nullptr) << start_error_;
    ASSERT_TRUE(server_->Reset().ok());
    auto dir = MakeTempDir(fs::temp_directory_path(), "kforge-agent-http-");
    ASSERT_TRUE(dir.ok());
    dir_ = *dir;
  }
  void TearDown() override { fs::remove_all(dir_); }

  static inline std::unique_ptr<FakeLlmServer> server_;
  static inline std::string start_error_;
  fs::path dir_;
};

TEST_P(SessionAgentModelTest, ToolCallsAndTheirResultsCrossTheWire) {
  const bool anthropic = GetParam() == "anthropic";
  json write = {{"id", "call_w"},
                {"name", "write_file"},
                {"arguments", json{{"path", "model_new.py"}, {"content", "fused"}}.dump()}};
  json compile = {{"id", "call_c"}, {"name", "compile"}, {"arguments", "{}"}};
  json submit = {{"id", "call_s"}, {"name", "submit"}, {"arguments", "{}"}};
  ASSERT_TRUE(server_
                  ->Script({{{"kind", "reply"}, {"text", "Writing it."}, {"tool_calls", {write}}},
                            {{"kind", "reply"}, {"text", ""}, {"tool_calls", {compile}}},
                            {{"kind", "reply"}, {"text", "Done."}, {"tool_calls", {submit}}}})
                  .ok());
  llm::LlmSettings settings;
  settings.retry.max_attempts = 1;
  settings.openai.api_key = "";
  settings.anthropic.api_key = "";
  llm::MemoryCallLog log;
  std::string spec = anthropic ? server_->AnthropicSpec("c") : server_->OpenAiSpec("m");
  auto session = llm::LlmSession::Open(settings, {"run-1", spec, &log, nullptr, nullptr});
  ASSERT_TRUE(session.ok()) << session.error().Describe();
  SessionAgentModel model(**session);
  CountingChecker checker;
  AgentWorkspace ws(dir_);
  AgentBrief brief;
  brief.system = "the skill";
  brief.task = "make it faster";
  brief.candidate_file = "model_new.py";
  AgentOutcome out = RunAgentEpisode(model, checker, ws, brief, AgentLimits{});

  ASSERT_EQ(out.end, AgentEnd::kSubmitted) << out.detail;
  EXPECT_EQ(*out.submitted_source, "fused");
  EXPECT_EQ(checker.compiled, std::vector<std::string>{"fused"});
  EXPECT_EQ(out.invalid_tool_calls, 0);
  ASSERT_EQ(out.turns.size(), 3u);
  for (const AgentTurnRecord& t : out.turns) EXPECT_FALSE(t.call_id.empty());  // recorded

  auto requests = server_->Requests();
  ASSERT_TRUE(requests.ok());
  ASSERT_EQ(requests->size(), 3u);
  const json& third = (*requests)[2]["body"];
  EXPECT_EQ(third["tools"].size(), 8u);
  if (anthropic) {
    EXPECT_EQ(third["system"], "the skill");
    // user task, assistant tool_use, user tool_result, assistant tool_use, user tool_result
    const json& messages = third["messages"];
    ASSERT_EQ(messages.size(), 5u);
    EXPECT_EQ(messages[1]["content"][1]["type"], "tool_use");
    EXPECT_EQ(messages[1]["content"][1]["id"], "call_w");
    EXPECT_EQ(messages[2]["role"], "user");
    EXPECT_EQ(messages[2]["content"][0]["type"], "tool_result");
    EXPECT_EQ(messages[2]["content"][0]["tool_use_id"], "call_w");
    EXPECT_EQ(messages[4]["content"][0]["tool_use_id"], "call_c");
  } else {
    const json& messages = third["messages"];
    ASSERT_EQ(messages.size(), 6u);  // system, user, assistant, tool, assistant, tool
    EXPECT_EQ(messages[2]["tool_calls"][0]["id"], "call_w");
    EXPECT_EQ(messages[3]["role"], "tool");
    EXPECT_EQ(messages[3]["tool_call_id"], "call_w");
    EXPECT_EQ(messages[5]["tool_call_id"], "call_c");
    EXPECT_NE(messages[5]["content"].get<std::string>().find("compile: ok"), std::string::npos);
  }
}

INSTANTIATE_TEST_SUITE_P(BothWires, SessionAgentModelTest,
                         ::testing::Values(std::string("openai"), std::string("anthropic")));

}  // namespace
}  // namespace kforge::agent
