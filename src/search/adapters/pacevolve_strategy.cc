#include "search/adapters/pacevolve_strategy.h"

#include <fmt/format.h>

#include <cmath>

#include "search/baseline/attempt_feedback.h"

namespace kforge::search {

namespace {

using pacevolve::StageKind;
using pacevolve::StageRequest;

constexpr int kStateVersion = 1;

std::string TemplateName(StageKind stage) {
  return "pacevolve_" + std::string(pacevolve::StageName(stage));
}

// Relative runtime (1 = the reference) as a speedup.
std::string SpeedupText(double relative_runtime) {
  if (!(relative_runtime > 0) || !std::isfinite(relative_runtime)) return "?";
  return fmt::format("{:.2f}x", 1.0 / relative_runtime);
}

std::string IdeasText(const std::vector<pacevolve::Idea>& ideas) {
  if (ideas.empty()) return "The idea pool is empty.";
  std::string out;
  for (const pacevolve::Idea& idea : ideas) {
    out += fmt::format("### Idea {}: {}\n", idea.id, idea.description);
    if (!idea.reasoning.empty()) out += "Why: " + idea.reasoning + "\n";
    if (idea.best_runtime_ms) {
      out += fmt::format("Best result: {} faster than the reference.\n",
                         SpeedupText(*idea.best_runtime_ms));
    }
    if (!idea.key_findings.empty()) out += "Key findings so far: " + idea.key_findings + "\n";
    if (!idea.hypotheses.empty()) {
      out += "Experiments:\n";
      for (const pacevolve::Hypothesis& h : idea.hypotheses) {
        std::string result = h.accepted && h.runtime_ms
                                 ? SpeedupText(*h.runtime_ms) + " faster than the reference"
                                 : h.outcome;
        out += fmt::format("- {} -> {}\n", h.description, result);
      }
    }
    out += "\n";
  }
  return out;
}

std::string FailuresText(const std::vector<pacevolve::FailureEntry>& failures) {
  std::string out;
  for (const pacevolve::FailureEntry& f : failures) {
    out += fmt::format("- [{}] {}{}\n", pacevolve::FailureKindName(f.kind), f.text,
                       f.reason.empty() ? "" : " (" + f.reason + ")");
  }
  return out;
}

std::string HistoryText(const std::vector<pacevolve::Hypothesis>& history) {
  std::string out;
  for (const pacevolve::Hypothesis& h : history) {
    std::string result = h.accepted && h.runtime_ms
                             ? SpeedupText(*h.runtime_ms) + " faster than the reference"
                             : h.outcome;
    out += fmt::format("- {} -> {}\n", h.description.empty() ? "(attempt)" : h.description, result);
  }
  return out;
}

std::map<std::string, std::string> StageVars(const StageRequest& r) {
  switch (r.stage) {
    case StageKind::kIdeaGeneration:
      return {{"ideas_wanted", std::to_string(r.ideas_wanted)}};
    case StageKind::kClassification:
      return {{"proposal", r.proposal ? r.proposal->description +
                                            (r.proposal->reasoning.empty()
                                                 ? ""
                                                 : " (reasoning: " + r.proposal->reasoning + ")")
                                      : ""}};
    case StageKind::kImplementation: {
      std::string idea;
      for (const pacevolve::Idea& i : r.ideas) {
        if (i.id == r.idea_id) idea = fmt::format("idea {}: {}", i.id, i.description);
      }
      return {{"idea", idea.empty() ? "(none: improve the program freely)" : idea},
              {"experiment", r.experiment.empty() ? "(choose one yourself)" : r.experiment}};
    }
    case StageKind::kSummarization: {
      std::string idea;
      for (const pacevolve::Idea& i : r.ideas) {
        if (i.id == r.idea_id) idea = fmt::format("idea {}: {}", i.id, i.description);
      }
      return {{"idea", idea}};
    }
    case StageKind::kPruning:
      return {{"max_ideas", std::to_string(r.max_ideas)}};
    case StageKind::kSelection:
      return {};
  }
  return {};
}

StrategyEvent ToStrategyEvent(const pacevolve::SearchEvent& e) {
  return StrategyEvent{e.type, e.island, e.iteration, e.detail};
}

}  // namespace

PacEvolveStrategy::PacEvolveStrategy(const StrategyContext& context, TaskPrompt task_prompt,
                                     PromptTemplates templates, pacevolve::PacEvolveSearch search,
                                     size_t max_log_chars)
    : context_(context),
      task_prompt_(std::move(task_prompt)),
      templates_(std::move(templates)),
      search_(std::move(search)),
      max_log_chars_(max_log_chars) {}

Result<std::unique_ptr<PacEvolveStrategy>> PacEvolveStrategy::Create(
    const StrategyContext& context, const PromptTemplates& templates,
    pacevolve::PacEvolveOptions options, size_t max_log_chars) {
  auto task_prompt = TaskPrompt::Create(context, templates);
  if (!task_prompt) return task_prompt.error();
  // Every stage's template renders now, so a broken one stops the run before it starts.
  StageRequest probe;
  probe.proposal = pacevolve::IdeaProposal{"x", "y"};
  for (StageKind stage :
       {StageKind::kIdeaGeneration, StageKind::kClassification, StageKind::kSelection,
        StageKind::kImplementation, StageKind::kSummarization, StageKind::kPruning}) {
    probe.stage = stage;
    if (auto text = templates.Render(TemplateName(stage), StageVars(probe)); !text) {
      return text.error();
    }
  }
  options.islands = std::max(1, context.islands);
  const double configured_target_ms = options.target_ms;
  options.target_ms = 0.0;  // set from the first evaluation: see the header
  auto search = pacevolve::PacEvolveSearch::Create(options, /*baseline_ms=*/1.0,
                                                   /*target_ms=*/0.0, context.seed);
  if (!search) return search.error();
  std::unique_ptr<PacEvolveStrategy> strategy(
      new PacEvolveStrategy(context, std::move(task_prompt).value(), templates,
                            std::move(search).value(), max_log_chars));
  strategy->configured_target_ms_ = configured_target_ms;
  return strategy;
}

Result<llm::Prompt> PacEvolveStrategy::BuildPrompt(const StageRequest& r) const {
  llm::Prompt p;
  task_prompt_.AddHead(p, BaselineText(eager_ms_, compile_ms_));
  const bool hcm = search_->options().hcm;
  if (hcm) {
    p.Text("ideas", "## Idea pool of this search\n" + IdeasText(r.ideas), 80);
    if (!r.failures.empty()) {
      p.Optional("failures",
                 "## Known failures (do not propose these again)\n" + FailuresText(r.failures), 40);
    }
  } else if (!r.history.empty()) {
    p.Optional("history", "## Earlier attempts (oldest first)\n" + HistoryText(r.history), 40);
  }
  if (!r.exemplars.empty()) {
    std::string text = "## Earlier variants and their measured speedups\n";
    for (size_t i = 0; i < r.exemplars.size(); ++i) {
      const pacevolve::ExemplarView& e = r.exemplars[i];
      text += fmt::format("### Variant {}: {} faster than the reference\n{}\n", i + 1,
                          SpeedupText(e.runtime_ms), task_prompt_.Fenced(e.source));
    }
    p.Optional("exemplars", text, 30);
  }
  if (r.stage == StageKind::kImplementation || r.stage == StageKind::kSelection) {
    if (r.parent.candidate_id.empty()) {
      p.Text("parent", "## Program to improve\nThe reference program above (1.00x).");
    } else {
      p.Text("parent",
             fmt::format("## Program to improve ({} faster than the reference)\n{}",
                         SpeedupText(r.parent.runtime_ms), task_prompt_.Fenced(r.parent.source)));
    }
  }
  if (r.stage == StageKind::kImplementation) {
    auto it = last_attempt_.find(r.island);
    if (it != last_attempt_.end()) p.Optional("last_attempt", "## Last attempt\n" + it->second, 50);
  }
  auto instruction = templates_.Render(TemplateName(r.stage), StageVars(r));
  if (!instruction) return instruction.error();
  std::string text = *instruction;
  if (!r.retry_reason.empty()) {
    text += fmt::format("\n\nYour previous answer to this step was sent back: {}", r.retry_reason);
  }
  p.Text("instruction", text);
  if (r.stage == StageKind::kImplementation) task_prompt_.AddAnswer(p);
  return p;
}

std::optional<Proposal> PacEvolveStrategy::Propose() {
  std::optional<StageRequest> r = search_->NextRequest();
  if (!r) return std::nullopt;
  Proposal proposal;
  proposal.id = r->id;
  proposal.stage = std::string(pacevolve::StageName(r->stage));
  proposal.island = r->island;
  auto prompt = BuildPrompt(*r);
  if (!prompt) {
    // Templates rendered at creation; a failure here is a bug. The island
    // treats it as a failed call and moves on rather than stalling the run.
    Count(search_->ObserveStageFailure(r->id, prompt.error().message));
    return Propose();
  }
  proposal.prompt = std::move(prompt).value();
  if (r->stage == StageKind::kImplementation) {
    proposal.kind = ReplyKind::kCode;
    proposal.code_langs = task_prompt_.code_langs();
    if (!r->parent.candidate_id.empty()) proposal.parent_ids.push_back(r->parent.candidate_id);
  } else {
    proposal.kind = ReplyKind::kStructured;
    proposal.schema = llm::OutputSchema{r->schema_name, "", r->schema};
  }
  in_flight_[r->id] = r->stage;
  return proposal;
}

void PacEvolveStrategy::Count(const Result<pacevolve::ReplyResult>& result) {
  if (!result || result->verdict != pacevolve::ReplyVerdict::kAccepted) ++rejected_replies_;
}

void PacEvolveStrategy::ApplyStructured(uint64_t id, StageKind stage, const nlohmann::json& v) {
  auto apply = [&](auto parsed, auto observe) {
    if (!parsed) {
      Count(search_->ObserveStageFailure(id, parsed.error().message));
      return;
    }
    Count(observe(*parsed));
  };
  auto& s = *search_;
  switch (stage) {
    case StageKind::kIdeaGeneration:
      apply(pacevolve::IdeaGenerationReply::FromJson(v),
            [&](const auto& x) { return s.ObserveIdeas(id, x); });
      return;
    case StageKind::kClassification:
      apply(pacevolve::ClassificationReply::FromJson(v),
            [&](const auto& x) { return s.ObserveClassification(id, x); });
      return;
    case StageKind::kSelection:
      apply(pacevolve::SelectionReply::FromJson(v),
            [&](const auto& x) { return s.ObserveSelection(id, x); });
      return;
    case StageKind::kSummarization:
      apply(pacevolve::SummaryReply::FromJson(v),
            [&](const auto& x) { return s.ObserveSummary(id, x); });
      return;
    case StageKind::kPruning:
      apply(pacevolve::PruningReply::FromJson(v),
            [&](const auto& x) { return s.ObservePruning(id, x); });
      return;
    case StageKind::kImplementation:
      Count(s.ObserveStageFailure(id, "a code stage received a structured reply"));
      return;
  }
}

void PacEvolveStrategy::Settle(uint64_t proposal_id, const ProposalOutcome& outcome) {
  auto it = in_flight_.find(proposal_id);
  if (it == in_flight_.end()) return;
  StageKind stage = it->second;
  in_flight_.erase(it);
  switch (outcome.kind) {
    case ProposalOutcome::Kind::kSubmitted:
      if (Status st = search_->ObserveSubmitted(proposal_id, outcome.candidate_id); !st) {
        ++rejected_replies_;
      }
      break;
    case ProposalOutcome::Kind::kStructured:
      ApplyStructured(proposal_id, stage, outcome.value);
      break;
    case ProposalOutcome::Kind::kFailed:
      Count(search_->ObserveStageFailure(proposal_id, outcome.reason));
      break;
  }
  for (const pacevolve::SearchEvent& e : search_->DrainEvents()) {
    events_.push_back(ToStrategyEvent(e));
  }
}

void PacEvolveStrategy::Observe(const Observation& o) {
  if (o.eval.eager_ms) {
    eager_ms_ = o.eval.eager_ms;
    compile_ms_ = o.eval.compile_ms;
  }
  // Only candidates the search is waiting for: after a restore, the recorded
  // evaluations it already holds are replayed too (and a candidate submitted
  // just before a crash, whose submission the saved state missed, is
  // evaluated by the loop but unknown to the search).
  bool pending = false;
  for (const auto& [island, id] : search_->PendingEvaluations()) pending |= id == o.candidate_id;
  if (!pending) return;
  const EvalSummary& e = o.eval;
  if (search_->evaluations() == 0) {
    // r in reference-relative units, from the first evaluation's own window.
    std::optional<double> floor_ms =
        configured_target_ms_ >= 0 ? std::optional<double>(configured_target_ms_) : e.sol_floor_ms;
    if (floor_ms && e.eager_ms && *e.eager_ms > 0) {
      double r = *floor_ms / *e.eager_ms;
      if (search_->SetTarget(r)) {
        events_.push_back(
            {"target_set",
             o.island,
             0,
             {{"target_relative", r},
              {"floor_ms", *floor_ms},
              {"eager_ms", *e.eager_ms},
              {"source", configured_target_ms_ >= 0 ? "pacevolve.target_ms" : "sol.floor_ms"}}});
      }
    }
  }
  pacevolve::EvaluationOutcome outcome;
  outcome.accepted = e.accepted && e.verdict == "ok" && e.speedup_eager && *e.speedup_eager > 0;
  if (outcome.accepted) outcome.runtime_ms = 1.0 / *e.speedup_eager;
  outcome.source = o.source;
  outcome.summary = OutcomeLine(o);
  last_attempt_[o.island] = AttemptDetails(o, max_log_chars_);
  (void)search_->ObserveEvaluation(o.candidate_id, outcome);
  for (const pacevolve::SearchEvent& ev : search_->DrainEvents()) {
    events_.push_back(ToStrategyEvent(ev));
  }
}

std::vector<StrategyEvent> PacEvolveStrategy::DrainEvents() {
  std::vector<StrategyEvent> out;
  out.swap(events_);
  return out;
}

std::optional<nlohmann::json> PacEvolveStrategy::SaveState() const {
  nlohmann::json last = nlohmann::json::object();
  for (const auto& [island, text] : last_attempt_) last[std::to_string(island)] = text;
  nlohmann::json j = {{"version", kStateVersion},
                      {"search", search_->ToJson()},
                      {"last_attempt", last},
                      {"rejected_replies", rejected_replies_}};
  j["eager_ms"] = eager_ms_ ? nlohmann::json(*eager_ms_) : nlohmann::json(nullptr);
  j["compile_ms"] = compile_ms_ ? nlohmann::json(*compile_ms_) : nlohmann::json(nullptr);
  return j;
}

Status PacEvolveStrategy::RestoreState(const nlohmann::json& j) {
  if (!j.is_object() || j.value("version", 0) != kStateVersion || !j.contains("search")) {
    return Error::BadInput("the saved pacevolve state has an unknown layout");
  }
  auto search = pacevolve::PacEvolveSearch::FromJson(j["search"]);
  if (!search) return search.error();
  search_ = std::move(search).value();
  last_attempt_.clear();
  if (auto it = j.find("last_attempt"); it != j.end() && it->is_object()) {
    for (const auto& [island, text] : it->items()) {
      if (text.is_string()) last_attempt_[std::stoi(island)] = text.get<std::string>();
    }
  }
  rejected_replies_ = j.value("rejected_replies", 0);
  auto number = [&](const char* key) -> std::optional<double> {
    auto it = j.find(key);
    if (it == j.end() || !it->is_number()) return std::nullopt;
    return it->get<double>();
  };
  eager_ms_ = number("eager_ms");
  compile_ms_ = number("compile_ms");
  in_flight_.clear();
  events_.clear();
  return Status::Ok();
}

}  // namespace kforge::search
