#include "agent/agent_episode.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <deque>
#include <filesystem>

#include "common/files.h"

namespace kforge::agent {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// A model that plays a script: each turn's tool calls (name, arguments), and
// records every request it was sent.
class ScriptedModel : public AgentModel {
 public:
  struct Reply {
    std::string text;
    std::vector<std::pair<std::string, json>> calls;
  };
  explicit ScriptedModel(std::vector<Reply> turns) : turns_(turns.begin(), turns.end()) {}

  llm::LlmResult<llm::LlmResponse> Turn(const llm::LlmRequest& request) override {
    requests.push_back(request);
    llm::LlmResponse r;
    r.usage = {1000, 100};
    if (turns_.empty()) {
      r.text = "done";
      return r;
    }
    const auto& t = turns_.front();
    r.text = t.text;
    for (const auto& [name, args] : t.calls) {
      r.tool_calls.push_back({fmt::format("call_{}", next_id_++), name, args.dump()});
    }
    turns_.pop_front();
    return r;
  }

  std::vector<llm::LlmRequest> requests;

 private:
  std::deque<Reply> turns_;
  int next_id_ = 1;
};

// Compiles anything without "syntax error"; verifies sources that hold "correct".
class FakeChecker : public CandidateChecker {
 public:
  CheckReport Compile(const std::string& s) override {
    calls.push_back("compile");
    bool ok = s.find("syntax error") == std::string::npos;
    return {ok, ok ? "built" : "line 1: syntax error", {{"compiled", ok}}};
  }
  CheckReport Verify(const std::string& s) override {
    calls.push_back("verify");
    bool ok = s.find("correct") != std::string::npos;
    return {ok, ok ? "5 trials passed" : "trial 0: 12 elements outside atol", {{"correct", ok}}};
  }
  CheckReport Profile(const std::string&) override {
    calls.push_back("profile");
    return {true, "candidate 0.20 ms, eager 1.60 ms: 8.0x", {{"speedup", 8.0}}};
  }
  std::vector<std::string> calls;
};

class AgentEpisodeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto dir = MakeTempDir(fs::temp_directory_path(), "kforge-agent-ep-");
    ASSERT_TRUE(dir.ok());
    root_ = *dir;
  }
  void TearDown() override { fs::remove_all(root_); }
  AgentBrief Brief() const {
    AgentBrief b;
    b.system = "the skill";
    b.task = "make it faster";
    b.candidate_file = "model_new.py";
    b.initial_source = "# the reference\n";
    return b;
  }
  fs::path root_;
};

TEST_F(AgentEpisodeTest, WritesChecksFixesAndSubmits) {
  ScriptedModel model({
      {"Plan: one fused kernel.",
       {{"write_file", {{"path", "model_new.py"}, {"content", "syntax error"}}}}},
      {"", {{"compile", json::object()}}},
      {"Fix it.",
       {{"edit_file",
         {{"path", "model_new.py"}, {"old_text", "syntax error"}, {"new_text", "wrong"}}},
        {"verify", json::object()}}},
      {"",
       {{"write_file", {{"path", "model_new.py"}, {"content", "correct fused kernel"}}},
        {"verify", json::object()},
        {"profile", json::object()}}},
      {"Done.",
       {{"submit", json::object()},
        {"write_file", {{"path", "model_new.py"}, {"content", "late"}}}}},
  });
  FakeChecker checker;
  AgentWorkspace ws(root_);
  AgentOutcome out = RunAgentEpisode(model, checker, ws, Brief(), AgentLimits{});

  EXPECT_EQ(out.end, AgentEnd::kSubmitted) << out.detail;
  ASSERT_TRUE(out.submitted_source.has_value());
  EXPECT_EQ(*out.submitted_source, "correct fused kernel");
  EXPECT_EQ(checker.calls, (std::vector<std::string>{"compile", "verify", "verify", "profile"}));
  ASSERT_EQ(out.turns.size(), 5u);
  EXPECT_EQ(out.tokens, 5 * 1100);
  EXPECT_EQ(out.invalid_tool_calls, 0);
  EXPECT_EQ(out.repeated_tool_calls, 0);  // the second verify came after a write
  EXPECT_EQ(out.tool_counts.at("verify"), 2);
  // The call after submit in the same turn was not run.
  EXPECT_EQ(out.turns[4].steps[1].result, "not run: the candidate was submitted");
  EXPECT_EQ(*ReadFile(root_ / "model_new.py"), "correct fused kernel");

  // Every request carried the skill, the task and the tools; each tool call
  // was answered in the next request by a tool message with its id.
  ASSERT_EQ(model.requests.size(), 5u);
  const llm::LlmRequest& last = model.requests.back();
  EXPECT_EQ(last.messages[0].role, llm::Role::kSystem);
  EXPECT_EQ(last.messages[0].content, "the skill");
  EXPECT_EQ(last.messages[1].content, "make it faster");
  EXPECT_EQ(last.tools.size(), 8u);
  const llm::ChatMessage& compiled = model.requests[2].messages.back();
  EXPECT_EQ(compiled.role, llm::Role::kTool);
  EXPECT_EQ(compiled.tool_call_id, "call_2");
  EXPECT_NE(compiled.content.find("compile: failed\nline 1: syntax error"), std::string::npos);

  json trajectory = out.ToJson();
  EXPECT_EQ(trajectory["end"], "submitted");
  EXPECT_EQ(trajectory["turns"][1]["steps"][0]["check"]["compiled"], false);
  EXPECT_EQ(trajectory["turns"][0]["steps"][0]["arguments"]["path"], "model_new.py");
}

TEST_F(AgentEpisodeTest, HallucinatedToolsAndLoopsAreCountedAndLimitsEndTheEpisode) {
  std::vector<ScriptedModel::Reply> turns = {
      {"", {{"run_shell", {{"cmd", "cat /reference.pt"}}}}},
      {"", {{"read_file", {{"name", "model_new.py"}}}}},  // wrong argument name
      {"", {{"read_file", {{"path", "../outside"}}}}},
  };
  for (int i = 0; i < 10; ++i) turns.push_back({"", {{"verify", json::object()}}});
  ScriptedModel model(turns);
  FakeChecker checker;
  AgentWorkspace ws(root_);
  AgentLimits limits;
  limits.max_turns = 6;
  AgentOutcome out = RunAgentEpisode(model, checker, ws, Brief(), limits);

  EXPECT_EQ(out.end, AgentEnd::kTurnLimit);
  EXPECT_FALSE(out.submitted_source.has_value());
  EXPECT_EQ(out.invalid_tool_calls, 2);   // the unknown tool and the wrong argument
  EXPECT_EQ(out.repeated_tool_calls, 2);  // verify three times, nothing written between
  EXPECT_NE(out.turns[0].steps[0].result.find("there is no tool 'run_shell'"), std::string::npos);
  EXPECT_NE(out.turns[2].steps[0].result.find("leaves the workspace"), std::string::npos);

  ScriptedModel talker(std::vector<ScriptedModel::Reply>{{"I think it is fast enough.", {}}});
  AgentOutcome stopped = RunAgentEpisode(talker, checker, ws, Brief(), AgentLimits{});
  EXPECT_EQ(stopped.end, AgentEnd::kStopped);

  ScriptedModel spender(turns);
  limits.max_turns = 100;
  limits.max_tokens = 2500;  // 1100 per turn: the third turn is not sent
  AgentOutcome spent = RunAgentEpisode(spender, checker, ws, Brief(), limits);
  EXPECT_EQ(spent.end, AgentEnd::kTokenLimit);
  EXPECT_EQ(spent.turns.size(), 3u);
}

TEST_F(AgentEpisodeTest, LongResultsKeepTheirStartAndEnd) {
  std::string log = "first error\n" + std::string(50000, '.') + "\nlast line";
  ScriptedModel model({{"", {{"write_file", {{"path", "model_new.py"}, {"content", log}}}}},
                       {"", {{"read_file", {{"path", "model_new.py"}}}}}});
  FakeChecker checker;
  AgentWorkspace ws(root_);
  AgentLimits limits;
  limits.max_result_chars = 1000;
  limits.max_turns = 2;
  AgentOutcome out = RunAgentEpisode(model, checker, ws, Brief(), limits);
  const std::string& read = out.turns[1].steps[0].result;
  EXPECT_LT(read.size(), 1100u);
  EXPECT_EQ(read.rfind("first error", 0), 0u);
  EXPECT_NE(read.find("characters cut"), std::string::npos);
  EXPECT_EQ(read.substr(read.size() - 9), "last line");
}

}  // namespace
}  // namespace kforge::agent
