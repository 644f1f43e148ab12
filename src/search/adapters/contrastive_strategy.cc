#include "search/adapters/contrastive_strategy.h"

#include <fmt/format.h>

#include <algorithm>

#include "search/baseline/attempt_feedback.h"
#include "search/contrastive/rng.h"

namespace kforge::search {

namespace {

// splitmix64's finaliser: spreads (seed, counters) over the generator's seed space.
uint64_t Mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

}  // namespace

ContrastiveStrategy::ContrastiveStrategy(const StrategyContext& context, TaskPrompt task_prompt,
                                         PromptTemplates templates, ContrastiveOptions options,
                                         size_t max_log_chars)
    : context_(context),
      task_prompt_(std::move(task_prompt)),
      templates_(std::move(templates)),
      options_(options),
      max_log_chars_(max_log_chars),
      store_(ScoreKind::kSpeedup, /*reference_ms=*/1.0, options.bucket_width),
      sampler_(options.temperature) {}

Result<std::unique_ptr<ContrastiveStrategy>> ContrastiveStrategy::Create(
    const StrategyContext& context, const PromptTemplates& templates, ContrastiveOptions options,
    size_t max_log_chars) {
  auto task_prompt = TaskPrompt::Create(context, templates);
  if (!task_prompt) return task_prompt.error();
  if (auto text = templates.Render("contrastive"); !text) return text.error();
  if (auto text = templates.Render("contrastive_first"); !text) return text.error();
  if (options.score != ScoreKind::kSpeedup) {
    return Error::BadInput(
        "--strategy contrastive scores by speedup; contrastive.score must be 'speedup'");
  }
  return std::unique_ptr<ContrastiveStrategy>(new ContrastiveStrategy(
      context, std::move(task_prompt).value(), templates, options, max_log_chars));
}

std::optional<Proposal> ContrastiveStrategy::Propose() {
  Rng rng(Mix(context_.seed ^ Mix(static_cast<uint64_t>(observed_) * 1000003ULL +
                                  static_cast<uint64_t>(proposals_since_observation_))));
  ++proposals_since_observation_;
  std::vector<size_t> picked =
      sampler_.Sample(store_, static_cast<size_t>(std::max(0, options_.exemplars)), rng);
  // Shown slowest first, so the contrast reads as a progression.
  std::sort(picked.begin(), picked.end(), [&](size_t a, size_t b) {
    return store_.entries()[a].score < store_.entries()[b].score;
  });

  Proposal proposal;
  proposal.id = next_id_++;
  proposal.stage = kStage;
  proposal.code_langs = task_prompt_.code_langs();
  llm::Prompt& p = proposal.prompt;
  task_prompt_.AddHead(p, BaselineText(eager_ms_, compile_ms_));
  if (!picked.empty()) {
    std::string text = "## Earlier variants and their measured speedups (higher is better)\n";
    for (size_t i = 0; i < picked.size(); ++i) {
      const Exemplar& e = store_.entries()[picked[i]];
      text += fmt::format("### Variant {}: score {:.2f} ({:.2f}x faster than eager PyTorch)\n{}\n",
                          i + 1, e.score, e.score, task_prompt_.Fenced(sources_[e.candidate_id]));
      proposal.parent_ids.push_back(e.candidate_id);
    }
    p.Text("exemplars", text, 60);
  }
  if (last_ && !(last_->eval.accepted && last_->eval.verdict == "ok")) {
    p.Optional("last_attempt",
               "## Last attempt (not accepted)\n" + AttemptDetails(*last_, max_log_chars_) +
                   "\nIts source:\n" + task_prompt_.Fenced(last_->source),
               50);
  }
  auto instruction = templates_.Render(picked.empty() ? "contrastive_first" : "contrastive");
  p.Text("instruction", instruction ? *instruction : "Write a faster version.");
  task_prompt_.AddAnswer(p);
  return proposal;
}

void ContrastiveStrategy::Settle(uint64_t /*proposal_id*/, const ProposalOutcome& /*outcome*/) {}

void ContrastiveStrategy::Observe(const Observation& o) {
  ++observed_;
  proposals_since_observation_ = 0;
  if (o.eval.eager_ms) {
    eager_ms_ = o.eval.eager_ms;
    compile_ms_ = o.eval.compile_ms;
  }
  last_ = o;
  const EvalSummary& e = o.eval;
  if (e.accepted && e.verdict == "ok" && e.speedup_eager && *e.speedup_eager > 0) {
    if (store_.Add(o.candidate_id, 1.0 / *e.speedup_eager, o.island, o.iteration)) {
      sources_[o.candidate_id] = o.source;
    }
  }
}

}  // namespace kforge::search
