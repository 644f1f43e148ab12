#include "search/baseline/best_of_n_strategy.h"

namespace kforge::search {

Result<std::unique_ptr<BestOfNStrategy>> BestOfNStrategy::Create(const StrategyContext& context,
                                                                 const PromptTemplates& templates) {
  auto task_prompt = TaskPrompt::Create(context, templates);
  if (!task_prompt) return task_prompt.error();
  auto instruction = templates.Render("best_of_n");
  if (!instruction) return instruction.error();
  llm::Prompt prompt;
  // No measured baseline: every sample sees exactly the same prompt.
  task_prompt->AddHead(prompt, "");
  prompt.Text("instruction", *instruction);
  task_prompt->AddAnswer(prompt);
  return std::unique_ptr<BestOfNStrategy>(
      new BestOfNStrategy(std::move(prompt), task_prompt->code_langs()));
}

std::optional<Proposal> BestOfNStrategy::Propose() {
  Proposal proposal;
  proposal.id = next_id_++;
  proposal.stage = kStage;
  proposal.prompt = prompt_;
  proposal.code_langs = code_langs_;
  return proposal;
}

}  // namespace kforge::search
