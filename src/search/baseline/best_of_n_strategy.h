// best-of-n: independent samples. Every proposal is the same prompt (task,
// format, policy, rules, hardware; nothing learned from earlier attempts), so
// the candidates are independent draws from the model; the run's best is the
// best of them. The baseline pacevolve and greedy must beat per evaluation.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "search/baseline/prompt_templates.h"
#include "search/baseline/task_prompt.h"
#include "search/strategy.h"

namespace kforge::search {

class BestOfNStrategy : public Strategy {
 public:
  static constexpr const char* kStage = "sample";

  static Result<std::unique_ptr<BestOfNStrategy>> Create(const StrategyContext& context,
                                                         const PromptTemplates& templates);

  std::string name() const override { return "best-of-n"; }
  std::optional<Proposal> Propose() override;
  void Settle(uint64_t proposal_id, const ProposalOutcome& outcome) override {}
  void Observe(const Observation& observation) override {}

 private:
  BestOfNStrategy(llm::Prompt prompt, std::vector<std::string> code_langs)
      : prompt_(std::move(prompt)), code_langs_(std::move(code_langs)) {}

  llm::Prompt prompt_;
  std::vector<std::string> code_langs_;
  uint64_t next_id_ = 1;
};

}  // namespace kforge::search
