// The agent's tools (CUDA Agent's environment): file tools on its workspace,
// and the environment's checks of the candidate file — compile, verify
// (correctness only), profile (timing and, on a GPU, the profile summary) —
// and submit, which ends the episode. Each call gets one text result for the
// model; what went wrong with a call (unknown tool, bad arguments) is told to
// the model as the result, and counted, never thrown.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "agent/agent_workspace.h"
#include "llm/types.h"

namespace kforge::agent {

inline constexpr const char* kToolReadFile = "read_file";
inline constexpr const char* kToolWriteFile = "write_file";
inline constexpr const char* kToolEditFile = "edit_file";
inline constexpr const char* kToolListFiles = "list_files";
inline constexpr const char* kToolCompile = "compile";
inline constexpr const char* kToolVerify = "verify";
inline constexpr const char* kToolProfile = "profile";
inline constexpr const char* kToolSubmit = "submit";

// One check of a candidate's source by the environment. `summary` is what the
// model reads (compiler errors, mismatches, times); `detail` is kept for the
// trajectory (the evaluation JSON, when there is one).
struct CheckReport {
  bool ok = false;
  std::string summary;
  nlohmann::json detail = nlohmann::json::object();
};

// What runs the checks: the evaluator in a run, a fake in tests. Each is
// given the candidate file's text, never a path the model chose.
class CandidateChecker {
 public:
  virtual ~CandidateChecker() = default;
  virtual CheckReport Compile(const std::string& source) = 0;
  virtual CheckReport Verify(const std::string& source) = 0;
  virtual CheckReport Profile(const std::string& source) = 0;
};

// The definitions sent with every turn. `candidate_file` names the file the
// checks and submit read (model_new.py, kernel.cu, ...).
std::vector<llm::ToolDefinition> AgentToolDefinitions(const std::string& candidate_file);

struct ToolResult {
  std::string text;        // the tool message's content
  bool valid_call = true;  // false: unknown tool or arguments that do not fit it
  bool submitted = false;  // submit ran: `submitted_source` is the candidate
  std::string submitted_source;
  nlohmann::json check = nullptr;  // the CheckReport's detail, for compile/verify/profile
};

ToolResult RunTool(const llm::ToolCall& call, const std::string& candidate_file,
                   AgentWorkspace& workspace, CandidateChecker& checker);

}  // namespace kforge::agent
