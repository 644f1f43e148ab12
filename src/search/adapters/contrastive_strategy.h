// contrastive: CUDA-L1's contrastive prompting as a standalone strategy.
// Every proposal shows the model N earlier accepted variants with their
// measured speedups, drawn from distinct score buckets (BucketSampler, eq. 1
// of the paper), and asks it to compare them (Performance Analysis), plan
// (Algorithm Design) and write a faster program (Code Implementation). The
// feedback on the last attempt is shown too when it failed, so a build or
// correctness error can be fixed.
//
// Scores are speedups over eager PyTorch measured in the candidate's own
// timing window (reference-relative runtime 1 / speedup in the store, so the
// reference is 1). Only accepted candidates with verdict `ok` enter the
// exemplar store. Deterministic given (seed, observations): the sampler's
// generator is reseeded from the seed, the number of observations and the
// number of proposals since the last one, so a resumed run is rebuilt from
// its evaluations alone.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>

#include "search/baseline/prompt_templates.h"
#include "search/baseline/task_prompt.h"
#include "search/contrastive/bucket_sampler.h"
#include "search/contrastive/contrastive_config.h"
#include "search/contrastive/exemplar_store.h"
#include "search/strategy.h"

namespace kforge::search {

class ContrastiveStrategy : public Strategy {
 public:
  static constexpr const char* kStage = "contrastive";

  static Result<std::unique_ptr<ContrastiveStrategy>> Create(const StrategyContext& context,
                                                             const PromptTemplates& templates,
                                                             ContrastiveOptions options,
                                                             size_t max_log_chars);

  std::string name() const override { return "contrastive"; }
  std::optional<Proposal> Propose() override;
  void Settle(uint64_t proposal_id, const ProposalOutcome& outcome) override;
  void Observe(const Observation& observation) override;

  const ExemplarStore& exemplars() const { return store_; }

 private:
  ContrastiveStrategy(const StrategyContext& context, TaskPrompt task_prompt,
                      PromptTemplates templates, ContrastiveOptions options, size_t max_log_chars);

  StrategyContext context_;
  TaskPrompt task_prompt_;
  PromptTemplates templates_;
  ContrastiveOptions options_;
  size_t max_log_chars_;
  ExemplarStore store_;
  BucketSampler sampler_;
  std::map<std::string, std::string> sources_;  // accepted candidate id -> source
  std::optional<Observation> last_;
  std::optional<double> eager_ms_, compile_ms_;
  int64_t observed_ = 0;
  int64_t proposals_since_observation_ = 0;
  uint64_t next_id_ = 1;
};

}  // namespace kforge::search
