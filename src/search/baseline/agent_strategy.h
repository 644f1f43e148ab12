// agent: CUDA Agent's tool-using loop as a search strategy. Every proposal is
// one episode (Proposal::agent; the optimize loop runs it, src/run/
// agent_proposal.h): the model is given the skill file (prompts/
// agent_skill.md) as its system message, the task, the measurements and the
// outcomes of earlier episodes, and a workspace whose candidate file holds
// the current best accepted candidate (empty until one is accepted). It
// writes, compiles, verifies and profiles drafts with the tools and submits
// one; the submitted file is evaluated in full like any candidate.
//
// Deterministic from its observations (the loop's resumability contract):
// the best is the accepted, verdict-ok candidate with the highest speedup
// over eager, ties to the earlier one. At most `parallel` episodes run or
// wait for their submission's evaluation at once (Settle and Observe free a
// place); a place is bookkeeping only, as Settle allows.
#pragma once

#include <deque>
#include <memory>
#include <optional>
#include <set>
#include <string>

#include "common/config.h"
#include "search/baseline/prompt_templates.h"
#include "search/baseline/task_prompt.h"
#include "search/strategy.h"

namespace kforge::search {

struct AgentOptions {
  int max_turns = 24;           // model turns per episode
  int64_t max_tokens = 400000;  // input + output tokens per episode
  int history_items = 8;        // earlier episodes' outcomes shown, one line each
  // Episodes at once, counting submissions still being evaluated: with 1,
  // each episode starts from the evaluation of the one before.
  int parallel = 1;
};

void RegisterAgentStrategyConfig(ConfigSchema& schema);
// kBadInput for out-of-range values.
Result<AgentOptions> AgentOptionsFromConfig(const Config& config);

class AgentStrategy : public Strategy {
 public:
  static constexpr const char* kStage = "agent";

  // `skill`: the system message (prompts/agent_skill.md, read by the caller).
  static Result<std::unique_ptr<AgentStrategy>> Create(const StrategyContext& context,
                                                       const PromptTemplates& templates,
                                                       std::string skill, AgentOptions options);

  std::string name() const override { return "agent"; }
  std::optional<Proposal> Propose() override;
  void Settle(uint64_t proposal_id, const ProposalOutcome& outcome) override;
  void Observe(const Observation& observation) override;

  // The file the episodes work on: kernel.cu in the native format, else model_new.py.
  const std::string& candidate_file() const { return candidate_file_; }
  const std::optional<Observation>& best() const { return best_; }

 private:
  AgentStrategy(TaskPrompt task_prompt, PromptTemplates templates, std::string skill,
                std::string candidate_file, std::string format_note, AgentOptions options)
      : task_prompt_(std::move(task_prompt)),
        templates_(std::move(templates)),
        skill_(std::move(skill)),
        candidate_file_(std::move(candidate_file)),
        format_note_(std::move(format_note)),
        options_(options) {}

  llm::Prompt BuildPrompt() const;

  TaskPrompt task_prompt_;
  PromptTemplates templates_;
  std::string skill_;
  std::string candidate_file_;
  std::string format_note_;
  AgentOptions options_;
  std::optional<Observation> best_;
  std::optional<double> eager_ms_, compile_ms_;
  std::deque<std::string> history_;            // one line per observed episode, oldest first
  std::set<uint64_t> episodes_in_flight_;      // proposal ids
  std::set<std::string> awaiting_evaluation_;  // candidate ids submitted, not yet observed
  int64_t observed_ = 0;
  uint64_t next_id_ = 1;
};

}  // namespace kforge::search
