#include "search/baseline/agent_strategy.h"

#include <fmt/format.h>

#include "search/baseline/attempt_feedback.h"

namespace kforge::search {

namespace {

constexpr int kMaxHistoryItems = 1000;
constexpr int kMaxTurns = 200;
constexpr int kMaxParallel = 64;

}  // namespace

void RegisterAgentStrategyConfig(ConfigSchema& s) {
  AgentOptions d;
  s.Add({"agent.max_turns", int64_t{d.max_turns},
         "agent: model turns per episode (each may call several tools)"});
  s.Add({"agent.max_tokens", d.max_tokens,
         "agent: input + output tokens per episode; the episode ends when they are spent"});
  s.Add({"agent.history", int64_t{d.history_items},
         "agent: earlier episodes' outcomes shown in the prompt, one line each"});
  s.Add({"agent.parallel", int64_t{d.parallel},
         "agent: episodes at once, counting submissions still being evaluated (1: each "
         "starts from the evaluation of the one before)"});
}

Result<AgentOptions> AgentOptionsFromConfig(const Config& c) {
  AgentOptions o;
  auto turns = c.GetIntInRange("agent.max_turns", 1, kMaxTurns);
  if (!turns) return turns.error();
  o.max_turns = *turns;
  o.max_tokens = c.GetInt("agent.max_tokens");
  if (o.max_tokens < 1) return Error::BadInput("config key 'agent.max_tokens' must be at least 1");
  auto history = c.GetIntInRange("agent.history", 0, kMaxHistoryItems);
  if (!history) return history.error();
  o.history_items = *history;
  auto parallel = c.GetIntInRange("agent.parallel", 1, kMaxParallel);
  if (!parallel) return parallel.error();
  o.parallel = *parallel;
  return o;
}

Result<std::unique_ptr<AgentStrategy>> AgentStrategy::Create(const StrategyContext& context,
                                                             const PromptTemplates& templates,
                                                             std::string skill,
                                                             AgentOptions options) {
  if (skill.empty()) return Error::BadInput("the agent's skill file (agent_skill.md) is empty");
  auto task_prompt = TaskPrompt::Create(context, templates);
  if (!task_prompt) return task_prompt.error();
  const bool native = context.format == "native";
  std::string file = native ? "kernel.cu" : "model_new.py";
  std::string note = native ? "the whole `.cu` file in the native format described above."
                            : "the whole Python file defining `ModelNew` as described above.";
  // Rendered per proposal (the start changes); checked here.
  auto text =
      templates.Render("agent", {{"candidate_file", file}, {"start", ""}, {"format_note", note}});
  if (!text) return text.error();
  return std::unique_ptr<AgentStrategy>(new AgentStrategy(std::move(task_prompt).value(), templates,
                                                          std::move(skill), std::move(file),
                                                          std::move(note), options));
}

llm::Prompt AgentStrategy::BuildPrompt() const {
  llm::Prompt p;
  p.System("skill", skill_);
  task_prompt_.AddHead(p, BaselineText(eager_ms_, compile_ms_));
  std::string start;
  if (best_) {
    p.Text("best", fmt::format("## Current best (iteration {})\nMeasured: {}.", best_->iteration,
                               MeasurementsText(best_->eval)));
    start = "it holds the current best candidate; make it faster.";
  } else {
    start = observed_ == 0 ? "it is empty; write the first version from the reference program."
                           : "it is empty (no candidate has been accepted yet); write a version "
                             "from the reference program.";
  }
  if (!history_.empty()) {
    p.History("history", "Earlier episodes' submissions (oldest first)",
              std::vector<std::string>(history_.begin(), history_.end()), 10);
  }
  auto instruction = templates_.Render(
      "agent",
      {{"candidate_file", candidate_file_}, {"start", start}, {"format_note", format_note_}});
  p.Text("instruction", instruction ? *instruction : "Write, check and submit the candidate file.");
  return p;
}

std::optional<Proposal> AgentStrategy::Propose() {
  if (static_cast<int>(episodes_in_flight_.size() + awaiting_evaluation_.size()) >=
      options_.parallel) {
    return std::nullopt;
  }
  Proposal proposal;
  proposal.id = next_id_++;
  proposal.stage = kStage;
  proposal.kind = ReplyKind::kAgent;
  proposal.prompt = BuildPrompt();
  proposal.code_langs = task_prompt_.code_langs();
  AgentSpec spec;
  spec.candidate_file = candidate_file_;
  spec.initial_source = best_ ? best_->source : "";
  spec.max_turns = options_.max_turns;
  spec.max_tokens = options_.max_tokens;
  proposal.agent = std::move(spec);
  if (best_) proposal.parent_ids.push_back(best_->candidate_id);
  episodes_in_flight_.insert(proposal.id);
  return proposal;
}

void AgentStrategy::Settle(uint64_t proposal_id, const ProposalOutcome& outcome) {
  if (episodes_in_flight_.erase(proposal_id) == 0) return;
  if (outcome.kind == ProposalOutcome::Kind::kSubmitted) {
    awaiting_evaluation_.insert(outcome.candidate_id);
  }
}

void AgentStrategy::Observe(const Observation& observation) {
  awaiting_evaluation_.erase(observation.candidate_id);
  if (observation.eval.eager_ms) {
    eager_ms_ = observation.eval.eager_ms;
    compile_ms_ = observation.eval.compile_ms;
  }
  history_.push_back(OutcomeLine(observation));
  while (static_cast<int>(history_.size()) > options_.history_items) history_.pop_front();
  ++observed_;
  if (IsNewBest(observation, best_)) best_ = observation;
}

}  // namespace kforge::search
