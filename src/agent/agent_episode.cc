#include "agent/agent_episode.h"

#include <fmt/format.h>

#include <set>

namespace kforge::agent {

using nlohmann::json;

const char* AgentEndName(AgentEnd end) {
  switch (end) {
    case AgentEnd::kSubmitted:
      return "submitted";
    case AgentEnd::kStopped:
      return "stopped";
    case AgentEnd::kTurnLimit:
      return "turn_limit";
    case AgentEnd::kTokenLimit:
      return "token_limit";
    case AgentEnd::kModelError:
      return "model_error";
  }
  return "stopped";
}

namespace {

// The start and the end of a long result (a compiler log's first error and
// its summary both matter), with what was cut in between said.
std::string Clip(const std::string& text, size_t max_chars) {
  if (text.size() <= max_chars) return text;
  const size_t head = max_chars / 2, tail = max_chars - head;
  return text.substr(0, head) +
         fmt::format("\n[... {} characters cut ...]\n", text.size() - head - tail) +
         text.substr(text.size() - tail);
}

bool WritesFiles(const std::string& tool) {
  return tool == kToolWriteFile || tool == kToolEditFile;
}

}  // namespace

AgentOutcome RunAgentEpisode(AgentModel& model, CandidateChecker& checker,
                             AgentWorkspace& workspace, const AgentBrief& brief,
                             const AgentLimits& limits) {
  AgentOutcome out;
  if (!brief.initial_source.empty()) {
    if (Status st = workspace.Write(brief.candidate_file, brief.initial_source); !st) {
      out.end = AgentEnd::kModelError;
      out.detail = "the workspace could not be set up: " + st.error().message;
      return out;
    }
  }
  llm::LlmRequest request;
  request.stage = brief.stage;
  request.messages = {llm::ChatMessage::System(brief.system), llm::ChatMessage::User(brief.task)};
  request.tools = AgentToolDefinitions(brief.candidate_file);
  // Calls made since the files last changed: the same call again can only
  // give the same answer (looping).
  std::set<std::string> since_change;
  for (int turn = 0;; ++turn) {
    if (turn >= limits.max_turns) {
      out.end = AgentEnd::kTurnLimit;
      out.detail = fmt::format("{} turns without a submission", limits.max_turns);
      break;
    }
    if (out.tokens >= limits.max_tokens) {
      out.end = AgentEnd::kTokenLimit;
      out.detail = fmt::format("{} tokens used, the limit is {}", out.tokens, limits.max_tokens);
      break;
    }
    auto response = model.Turn(request);
    if (!response) {
      out.end = AgentEnd::kModelError;
      out.detail = response.error().Describe();
      break;
    }
    out.tokens += response->usage.input_tokens + response->usage.output_tokens;
    AgentTurnRecord record{response->text, {}, response->usage, response->call_id};
    llm::ChatMessage assistant = llm::ChatMessage::Assistant(response->text);
    assistant.tool_calls = response->tool_calls;
    request.messages.push_back(std::move(assistant));
    if (response->tool_calls.empty()) {
      out.turns.push_back(std::move(record));
      out.end = AgentEnd::kStopped;
      out.detail = "the model answered without a tool call and without submitting";
      break;
    }
    bool submitted = false;
    for (const llm::ToolCall& call : response->tool_calls) {
      if (submitted) {  // the episode is over: later calls of the turn are not run
        record.steps.push_back({call, "not run: the candidate was submitted", true, nullptr});
        continue;
      }
      if (!since_change.insert(call.name + '\n' + call.arguments_json).second) {
        ++out.repeated_tool_calls;
      }
      ToolResult result = RunTool(call, brief.candidate_file, workspace, checker);
      ++out.tool_counts[call.name];
      if (!result.valid_call) ++out.invalid_tool_calls;
      if (result.valid_call && WritesFiles(call.name)) since_change.clear();
      std::string text = Clip(result.text, limits.max_result_chars);
      request.messages.push_back(llm::ChatMessage::ToolResult(call.id, text));
      record.steps.push_back({call, std::move(text), result.valid_call, std::move(result.check)});
      if (result.submitted) {
        submitted = true;
        out.submitted_source = std::move(result.submitted_source);
      }
    }
    out.turns.push_back(std::move(record));
    if (submitted) {
      out.end = AgentEnd::kSubmitted;
      out.detail = fmt::format("submitted after {} turn(s)", turn + 1);
      break;
    }
  }
  return out;
}

json AgentOutcome::ToJson() const {
  json turns_json = json::array();
  for (const AgentTurnRecord& t : turns) {
    json steps = json::array();
    for (const AgentToolStep& s : t.steps) {
      json args = json::parse(s.call.arguments_json, nullptr, false);
      steps.push_back({{"tool", s.call.name},
                       {"call_id", s.call.id},
                       {"arguments", args.is_discarded() ? json(s.call.arguments_json) : args},
                       {"result", s.result},
                       {"valid", s.valid},
                       {"check", s.check}});
    }
    turns_json.push_back(
        {{"text", t.text},
         {"llm_call_id", t.call_id},
         {"usage",
          {{"input_tokens", t.usage.input_tokens}, {"output_tokens", t.usage.output_tokens}}},
         {"steps", std::move(steps)}});
  }
  return {{"end", AgentEndName(end)},
          {"detail", detail},
          {"submitted", submitted_source.has_value()},
          {"tokens", tokens},
          {"invalid_tool_calls", invalid_tool_calls},
          {"repeated_tool_calls", repeated_tool_calls},
          {"tool_counts", tool_counts},
          {"turns", std::move(turns_json)}};
}

}  // namespace kforge::agent
