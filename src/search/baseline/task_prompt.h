// The parts every baseline prompt shares: the role, the candidate format (the
// device's KernelBench-style file, or the native .cu format on a GPU), the
// policy and integrity rules, the task, the hardware, and the answer format.
// Rendered from prompts/ once, at creation.
#pragma once

#include <string>
#include <vector>

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

  // The fence languages an answer's code block is looked for in (first
  // preferred), and a candidate's source fenced as the answer format asks.
  const std::vector<std::string>& code_langs() const { return code_langs_; }
  std::string Fenced(const std::string& source) const;

 private:
  PromptTemplates templates_;
  std::string hardware_name_;
  std::string system_, format_, policy_, rules_, task_, answer_;
  std::vector<std::string> code_langs_;
};

}  // namespace kforge::search
