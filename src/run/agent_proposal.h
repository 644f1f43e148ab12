// An `agent` proposal run on its proposal thread: one tool-using episode
// (src/agent) whose compile/verify/profile tools are evaluations of the draft
// at the matching depth, handed to the scheduler that owns the evaluation
// workers (the backend's workers are not shared with other threads), and
// whose turns go through the run's ModelClient, so every turn is a recorded
// LLM call. The submitted file becomes an ordinary candidate: it is then
// evaluated in full, like any other, and its evaluation is the one of record.
#pragma once

#include <atomic>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "agent/agent_tools.h"
#include "agent/check_report.h"
#include "common/result.h"
#include "llm/llm_error.h"
#include "run/evaluation_backend.h"
#include "run/model_client.h"
#include "search/strategy.h"

namespace kforge::run {

// Hands a check to the scheduler and waits for its `kforge eval --json`
// object (or why it was not run: the run is stopping).
using CheckSubmit = std::function<Result<nlohmann::json>(EvaluationRequest)>;

// The tools' checks as evaluation requests: compile at EvalDepth::kBuild,
// verify at kCorrectness, profile a full evaluation (times and speedups).
// None is recorded as an evaluation of the run.
class EpisodeChecker : public agent::CandidateChecker {
 public:
  EpisodeChecker(std::string id_prefix, bool native, CheckSubmit submit)
      : id_prefix_(std::move(id_prefix)), native_(native), submit_(std::move(submit)) {}

  agent::CheckReport Compile(const std::string& source) override {
    return Check(agent::CheckKind::kCompile, source);
  }
  agent::CheckReport Verify(const std::string& source) override {
    return Check(agent::CheckKind::kVerify, source);
  }
  agent::CheckReport Profile(const std::string& source) override {
    return Check(agent::CheckKind::kProfile, source);
  }

 private:
  agent::CheckReport Check(agent::CheckKind kind, const std::string& source);

  std::string id_prefix_;
  bool native_ = false;
  CheckSubmit submit_;
  int checks_ = 0;
};

// What a proposal's model calls gave back: one call for a code or structured
// reply, the whole episode for an agent proposal.
struct ProposalAnswer {
  // The code (an agent's submitted file); empty when there is none.
  std::string code;
  std::string reply_text;   // the model's words (the techniques it named)
  std::string llm_call_id;  // the call that answered (an agent's submitting turn)
  nlohmann::json value;     // a structured reply's value
  // A model call failed (not because the run is stopping): the loop treats
  // it like a failed code call (budget, fatal kinds, unusable).
  std::optional<llm::LlmError> error;
  // Agent proposals only.
  bool interrupted = false;   // the run stopped during the episode
  std::string end_reason;     // why the episode ended without a submission
  nlohmann::json trajectory;  // AgentOutcome::ToJson, without each check's evaluation object
};

// Runs the episode of `proposal` (kind kAgent) in a fresh workspace under
// `work_root` (removed afterwards: the trajectory keeps what was written).
// `stopping` set: the next model turn is not made and the episode ends.
ProposalAnswer RunAgentProposal(ModelClient& model, const search::Proposal& proposal, bool native,
                                CheckSubmit submit, const std::filesystem::path& work_root,
                                std::shared_ptr<const std::atomic<bool>> stopping);

}  // namespace kforge::run
