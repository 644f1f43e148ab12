// The parts every baseline prompt shares: the role, the candidate format for
// the device, the policy and integrity rules, the task, the hardware, and
// the answer format. Rendered from prompts/ once, at creation.
#pragma once

#include <string>

#include "common/result.h"
#include "llm/prompt.h"
#include "search/baseline/prompt_templates.h"
#include "search/strategy.h"

namespace kforge::search {

class TaskPrompt {
 public:
  // kBadInput when a template is missing, uses an unknown placeholder, or
  // the context names an unknown device or policy.
  static Result<TaskPrompt> Create(const StrategyContext& context,
                                   const PromptTemplates& templates);

  // System role, then the format, policy, rules, task and hardware
  // sections; `baseline` is the reference's measured times (may be empty).
  void AddHead(llm::Prompt& prompt, const std::string& baseline) const;
  // The answer format, last.
  void AddAnswer(llm::Prompt& prompt) const;

 private:
  PromptTemplates templates_;
  std::string hardware_name_;
  std::string system_, format_, policy_, rules_, task_, answer_;
};

}  // namespace kforge::search
