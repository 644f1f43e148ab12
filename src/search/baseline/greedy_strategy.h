// greedy: hill climbing on the best accepted candidate. Every proposal asks
// the model to improve the current best (the reference program until one is
// accepted), showing it the best's source and measurements, the full
// feedback of the last attempt (compiler errors, correctness failure,
// integrity flags, timing) with that attempt's source when it is not the
// best, and one line for each of the earlier attempts.
//
// With several islands, each island is an independent climber; a proposal
// goes to the island with the fewest attempts (observed or in flight).
//
// Honest by construction: "best" means accepted with verdict ok (a suspect
// result is shown as such and never refined), compared by speedup over eager
// PyTorch measured in the same timing window, ties to the earlier candidate.
#pragma once

#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/config.h"
#include "search/baseline/prompt_templates.h"
#include "search/baseline/task_prompt.h"
#include "search/strategy.h"

namespace kforge::search {

struct GreedyOptions {
  int history_items = 8;        // earlier attempts shown, one line each
  size_t max_log_chars = 3000;  // compiler output shown for a failed build
};

void RegisterBaselineStrategyConfig(ConfigSchema& schema);
// kBadInput for out-of-range values.
Result<GreedyOptions> GreedyOptionsFromConfig(const Config& config);

class GreedyStrategy : public Strategy {
 public:
  static constexpr const char* kStage = "refine";

  static Result<std::unique_ptr<GreedyStrategy>> Create(const StrategyContext& context,
                                                        const PromptTemplates& templates,
                                                        GreedyOptions options);

  std::string name() const override { return "greedy"; }
  std::optional<Proposal> Propose() override;
  void Settle(uint64_t proposal_id, const ProposalOutcome& outcome) override;
  void Observe(const Observation& observation) override;

  // The island's current best (nullopt: the reference).
  const std::optional<Observation>& best(int island) const { return islands_.at(island).best; }

 private:
  struct Island {
    std::optional<Observation> best;
    std::optional<Observation> last;
    std::deque<std::string> history;  // outcome lines before `last`, oldest first
    int64_t observed = 0;
  };

  GreedyStrategy(const StrategyContext& context, TaskPrompt task_prompt, PromptTemplates templates,
                 GreedyOptions options);
  int PickIsland() const;
  llm::Prompt BuildPrompt(const Island& island) const;

  StrategyContext context_;
  TaskPrompt task_prompt_;
  PromptTemplates templates_;
  GreedyOptions options_;
  std::vector<Island> islands_;
  std::optional<double> eager_ms_, compile_ms_;  // the reference, from the latest evaluation
  // In-flight bookkeeping (not decisions' state): proposals and evaluations per island.
  std::map<uint64_t, int> proposals_in_flight_;
  std::map<std::string, int> evaluations_in_flight_;
  uint64_t next_id_ = 1;
};

}  // namespace kforge::search
