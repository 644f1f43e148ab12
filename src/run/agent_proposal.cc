#include "run/agent_proposal.h"

#include <fmt/format.h>

#include "agent/agent_episode.h"
#include "agent/agent_workspace.h"
#include "common/files.h"
#include "common/hash.h"

namespace kforge::run {

namespace {

using nlohmann::json;

// The episode's turns through the run's model client; none once the run stops.
class ClientAgentModel : public agent::AgentModel {
 public:
  ClientAgentModel(ModelClient& model, std::shared_ptr<const std::atomic<bool>> stopping)
      : model_(model), stopping_(std::move(stopping)) {}

  llm::LlmResult<llm::LlmResponse> Turn(const llm::LlmRequest& request) override {
    if (stopping_ && stopping_->load()) {
      interrupted_ = true;
      return llm::LlmError::Make(llm::LlmErrorKind::kServer, "the run is stopping");
    }
    auto response = model_.Complete(request);
    if (!response) last_error_ = response.error();
    return response;
  }

  bool interrupted() const { return interrupted_; }
  const std::optional<llm::LlmError>& last_error() const { return last_error_; }

 private:
  ModelClient& model_;
  std::shared_ptr<const std::atomic<bool>> stopping_;
  bool interrupted_ = false;
  std::optional<llm::LlmError> last_error_;
};

// Each check's evaluation object is large and already summarised in the
// tool's result: the recorded trajectory keeps the result text only.
json WithoutCheckObjects(json trajectory) {
  for (json& turn : trajectory["turns"]) {
    for (json& step : turn["steps"]) step.erase("check");
  }
  return trajectory;
}

}  // namespace

agent::CheckReport EpisodeChecker::Check(agent::CheckKind kind, const std::string& source) {
  EvaluationRequest request;
  request.candidate_id = fmt::format("{}-check{}", id_prefix_, ++checks_);
  request.source = source;
  request.sha256 = Sha256Hex(source);
  request.native = native_;
  request.depth = kind == agent::CheckKind::kCompile  ? EvalDepth::kBuild
                  : kind == agent::CheckKind::kVerify ? EvalDepth::kCorrectness
                                                      : EvalDepth::kFull;
  auto eval = submit_(std::move(request));
  if (!eval) {
    agent::CheckReport report;
    report.summary =
        fmt::format("{}: not run: {}", agent::CheckKindName(kind), eval.error().message);
    return report;
  }
  return agent::CheckReportFromEvaluation(kind, *eval);
}

ProposalAnswer RunAgentProposal(ModelClient& model, const search::Proposal& proposal, bool native,
                                CheckSubmit submit, const std::filesystem::path& work_root,
                                std::shared_ptr<const std::atomic<bool>> stopping) {
  ProposalAnswer result;
  const search::AgentSpec spec = proposal.agent.value_or(search::AgentSpec{});
  std::error_code ec;
  std::filesystem::create_directories(work_root, ec);
  auto dir = MakeTempDir(work_root, fmt::format("agent-{}-", proposal.id));
  if (!dir) {
    result.error =
        llm::LlmError::Make(llm::LlmErrorKind::kRecording,
                            "the agent's workspace could not be made: " + dir.error().message);
    return result;
  }
  agent::AgentWorkspace workspace(*dir);
  EpisodeChecker checker(fmt::format("agent{}", proposal.id), native, std::move(submit));
  ClientAgentModel turns(model, stopping);

  agent::AgentBrief brief;
  brief.stage = proposal.stage;
  brief.candidate_file = spec.candidate_file;
  brief.initial_source = spec.initial_source;
  for (const llm::ChatMessage& m : proposal.prompt.Render()) {
    std::string& part = m.role == llm::Role::kSystem ? brief.system : brief.task;
    part += (part.empty() ? "" : "\n\n") + m.content;
  }
  agent::AgentLimits limits;
  limits.max_turns = spec.max_turns;
  limits.max_tokens = spec.max_tokens;

  agent::AgentOutcome outcome = agent::RunAgentEpisode(turns, checker, workspace, brief, limits);
  std::filesystem::remove_all(*dir, ec);

  result.trajectory = WithoutCheckObjects(outcome.ToJson());
  for (const agent::AgentTurnRecord& t : outcome.turns) {
    if (!t.text.empty()) result.reply_text += (result.reply_text.empty() ? "" : "\n\n") + t.text;
  }
  if (outcome.end == agent::AgentEnd::kSubmitted && outcome.submitted_source) {
    result.code = std::move(*outcome.submitted_source);
    result.llm_call_id = outcome.turns.empty() ? "" : outcome.turns.back().call_id;
    return result;
  }
  result.end_reason = fmt::format("the agent episode ended without a submission ({}: {})",
                                  agent::AgentEndName(outcome.end), outcome.detail);
  if (turns.interrupted()) {
    result.interrupted = true;
  } else if (outcome.end == agent::AgentEnd::kModelError && turns.last_error()) {
    result.error = turns.last_error();
  }
  return result;
}

}  // namespace kforge::run
