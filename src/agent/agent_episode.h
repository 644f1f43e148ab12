// AgentEpisode: one multi-turn tool-using attempt at a candidate (CUDA
// Agent's loop): the model is sent the skill and the task with the tools,
// each tool call it makes is run and its result sent back, until it submits
// the candidate file or a limit ends the episode. The turns are kept as the
// trajectory (for the run's record and for RL exports), with the counts the
// RFT filter reads: invalid tool calls (hallucinated tools or arguments) and
// repeated identical calls (looping).
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "agent/agent_tools.h"
#include "agent/agent_workspace.h"
#include "llm/llm_error.h"
#include "llm/types.h"

namespace kforge::agent {

// One model turn: the run's LlmSession in a run, a script in tests.
class AgentModel {
 public:
  virtual ~AgentModel() = default;
  virtual llm::LlmResult<llm::LlmResponse> Turn(const llm::LlmRequest& request) = 0;
};

struct AgentLimits {
  int max_turns = 24;               // model calls
  int64_t max_tokens = 400000;      // input + output tokens over the episode
  size_t max_result_chars = 12000;  // one tool result, cut in the middle beyond this
};

struct AgentBrief {
  std::string stage = "agent";  // the LLM stage of every turn
  std::string system;           // the skill file (rules, workflow)
  std::string task;             // the first user message: task, format, hardware
  std::string candidate_file;   // the file the checks and submit read
  std::string initial_source;   // written to candidate_file before the first turn (may be empty)
};

struct AgentToolStep {
  llm::ToolCall call;
  std::string result;
  bool valid = true;
  nlohmann::json check = nullptr;
};

struct AgentTurnRecord {
  std::string text;  // what the model wrote besides its tool calls
  std::vector<AgentToolStep> steps;
  llm::Usage usage;
  std::string call_id;  // the LLM call's record id, when the session recorded one
};

enum class AgentEnd {
  kSubmitted,   // the model called submit
  kStopped,     // the model answered without a tool call and without submitting
  kTurnLimit,   // max_turns reached
  kTokenLimit,  // max_tokens reached
  kModelError,  // a model call failed (after its retries)
};
const char* AgentEndName(AgentEnd end);

struct AgentOutcome {
  AgentEnd end = AgentEnd::kStopped;
  std::optional<std::string> submitted_source;
  std::string detail;  // why it ended, in words
  std::vector<AgentTurnRecord> turns;
  int64_t tokens = 0;
  int invalid_tool_calls = 0;
  int repeated_tool_calls = 0;  // a call identical (name and arguments) to an earlier one
                                // with no file written in between
  std::map<std::string, int> tool_counts;

  nlohmann::json ToJson() const;  // the trajectory, as recorded
};

AgentOutcome RunAgentEpisode(AgentModel& model, CandidateChecker& checker,
                             AgentWorkspace& workspace, const AgentBrief& brief,
                             const AgentLimits& limits);

}  // namespace kforge::agent
