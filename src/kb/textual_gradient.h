// KernelBlaster's textual-gradient update (§3.3, Algorithm 2): after an
// evaluation, three structured LLM stages turn "what the knowledge base
// expected" and "what the evaluation achieved" into a rewritten entry —
// PolicyEvaluation compares them, PerfGapAnalysis explains the difference,
// ParameterUpdate rewrites what the entry says. The numeric update
// (KnowledgeBase::Record) runs regardless; this is the text half.
//
// Pure: builds the prompts and schemas, applies a validated reply. The caller
// sends the stages through its LlmClient (structured output, recorded).
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "common/result.h"
#include "kb/knowledge_base.h"

namespace kforge::kb {

// Stage names: the call log's stage and the `llm.stage.<name>` model override.
inline constexpr const char* kStagePolicyEvaluation = "kb_policy_evaluation";
inline constexpr const char* kStagePerfGapAnalysis = "kb_perf_gap_analysis";
inline constexpr const char* kStageParameterUpdate = "kb_parameter_update";

// One evaluated application of an optimization.
struct AppliedStep {
  std::string state;          // the parent's performance state
  std::string technique;      // the optimization the model said it applied
  double predicted_gain = 1;  // the entry's predicted gain when it was selected
  bool accepted = false;
  double speedup = 1;          // over the parent (1 when not accepted)
  std::string outcome;         // the evaluation in words: error, flags, timing
  std::string profile_before;  // SummarizeProfiles of the parent
  std::string profile_after;   // of the candidate; empty when it was not profiled
};

// {"verdict": "better"|"as_expected"|"worse"|"failed", "expected", "achieved", "evidence"}
nlohmann::json PolicyEvaluationSchema();
// {"explanation", "causes": [..], "state_after"}
nlohmann::json PerfGapAnalysisSchema();
// {"notes", "description", "new_state": {"name", "description", "signature"} | null,
//  "new_techniques": [{"technique", "description"}]}
nlohmann::json ParameterUpdateSchema();

std::string PolicyEvaluationPrompt(const KnowledgeBase& kb, const AppliedStep& step);
std::string PerfGapAnalysisPrompt(const KnowledgeBase& kb, const AppliedStep& step,
                                  const nlohmann::json& evaluation);
std::string ParameterUpdatePrompt(const KnowledgeBase& kb, const AppliedStep& step,
                                  const nlohmann::json& evaluation, const nlohmann::json& gap);

// Applies a ParameterUpdate reply that validated against its schema: the
// entry's notes are replaced, its description too when the reply gives one; a
// discovered state and new techniques are added with a neutral prior (gain 1,
// so only measurements make them favourites). Returns what changed, as the
// `kb_update` event's detail. kNotFound when the step's entry is not in `kb`.
Result<nlohmann::json> ApplyParameterUpdate(KnowledgeBase& kb, const AppliedStep& step,
                                            const nlohmann::json& reply);

}  // namespace kforge::kb
