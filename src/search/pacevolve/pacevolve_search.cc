#include "search/pacevolve/pacevolve_search.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "search/pacevolve/crossover_policy.h"

namespace kforge::search::pacevolve {
namespace {

using nlohmann::json;

constexpr double kInfinity = std::numeric_limits<double>::infinity();

template <class T>
json ArrayOf(const std::vector<T>& items) {
  json arr = json::array();
  for (const T& item : items) arr.push_back(item.ToJson());
  return arr;
}

std::string IdList(const IdeaPool& pool) {
  std::string out;
  for (const Idea& idea : pool.ideas()) {
    if (!out.empty()) out += ", ";
    out += std::to_string(idea.id);
  }
  return out.empty() ? "none" : out;
}

}  // namespace

std::string_view StageName(StageKind stage) {
  switch (stage) {
    case StageKind::kIdeaGeneration:
      return "idea_generation";
    case StageKind::kClassification:
      return "classification";
    case StageKind::kSelection:
      return "selection";
    case StageKind::kImplementation:
      return "implementation";
    case StageKind::kSummarization:
      return "summarization";
    case StageKind::kPruning:
      return "pruning";
  }
  return "unknown";
}

std::string_view IslandPhaseName(IslandPhase phase) {
  switch (phase) {
    case IslandPhase::kGenerateIdeas:
      return "generate_ideas";
    case IslandPhase::kClassify:
      return "classify";
    case IslandPhase::kSelect:
      return "select";
    case IslandPhase::kImplement:
      return "implement";
    case IslandPhase::kEvaluating:
      return "evaluating";
    case IslandPhase::kSummarize:
      return "summarize";
    case IslandPhase::kPrune:
      return "prune";
  }
  return "unknown";
}

json ProgramRef::ToJson() const {
  return {{"candidate_id", candidate_id}, {"runtime_ms", runtime_ms}, {"source", source}};
}

json ExemplarView::ToJson() const {
  return {{"candidate_id", candidate_id},
          {"runtime_ms", runtime_ms},
          {"score", score},
          {"source", source}};
}

json StageRequest::ToJson() const {
  return {{"id", id},
          {"stage", StageName(stage)},
          {"island", island},
          {"attempt", attempt},
          {"retry_reason", retry_reason},
          {"iteration", iteration},
          {"generation", generation},
          {"ideas", ArrayOf(ideas)},
          {"history", ArrayOf(history)},
          {"failures", ArrayOf(failures)},
          {"exemplars", ArrayOf(exemplars)},
          {"parent", parent.ToJson()},
          {"proposal", proposal ? json{{"description", proposal->description},
                                       {"reasoning", proposal->reasoning}}
                                : json(nullptr)},
          {"idea_id", idea_id},
          {"experiment", experiment},
          {"ideas_wanted", ideas_wanted},
          {"max_ideas", max_ideas},
          {"schema_name", schema_name},
          {"schema", schema}};
}

json SearchEvent::ToJson() const {
  return {{"type", type}, {"island", island}, {"iteration", iteration}, {"detail", detail}};
}

IslandState::IslandState(int index_in, const PacEvolveOptions& options, double baseline_ms,
                         double target_ms)
    : index(index_in),
      pool(options.max_ideas, options.max_hypotheses),
      exemplars(options.contrastive.score, baseline_ms, options.contrastive.bucket_width),
      momentum(options.momentum_beta, target_ms, baseline_ms),
      best_runtime_ms(baseline_ms),
      best_ever_runtime_ms(baseline_ms) {}

PacEvolveSearch::PacEvolveSearch(const PacEvolveOptions& options, double baseline_ms,
                                 double target_ms, uint64_t seed)
    : options_(options),
      baseline_ms_(baseline_ms),
      target_ms_(target_ms),
      rng_(seed),
      sampler_(options.contrastive.temperature),
      failures_(options.failure_match_threshold),
      best_runtime_ms_(baseline_ms) {}

Result<PacEvolveSearch> PacEvolveSearch::Create(const PacEvolveOptions& options, double baseline_ms,
                                                double target_ms, uint64_t seed) {
  if (Status s = ValidatePacEvolveOptions(options); !s.ok()) return s.error();
  if (!std::isfinite(baseline_ms) || baseline_ms <= 0.0) {
    return Error::BadInput(fmt::format("baseline runtime must be positive, got {}", baseline_ms));
  }
  if (!std::isfinite(target_ms) || target_ms < 0.0) {
    return Error::BadInput(fmt::format("target runtime must be non-negative, got {}", target_ms));
  }
  PacEvolveSearch search(options, baseline_ms, target_ms, seed);
  for (int i = 0; i < options.islands; ++i) {
    search.islands_.emplace_back(i, options, baseline_ms, target_ms);
    IslandState& is = search.islands_.back();
    is.trajectory.push_back(search.Snapshot(is));
    search.StartIteration(is);
  }
  return search;
}

// ---------------------------------------------------------------------------
// Requests

std::optional<StageRequest> PacEvolveSearch::NextRequest() {
  const int n = num_islands();
  for (int k = 0; k < n; ++k) {
    IslandState& is = islands_[(cursor_ + k) % n];
    if (is.outstanding_request != 0 || is.phase == IslandPhase::kEvaluating) continue;
    cursor_ = (is.index + 1) % n;
    return BuildRequest(is);
  }
  return std::nullopt;
}

ProgramRef PacEvolveSearch::ProgramOf(const std::string& candidate_id) const {
  ProgramRef p;
  auto it = candidates_.find(candidate_id);
  if (candidate_id.empty() || it == candidates_.end()) {
    p.runtime_ms = baseline_ms_;
    return p;
  }
  p.candidate_id = candidate_id;
  p.runtime_ms = it->second.runtime_ms;
  p.source = it->second.source;
  return p;
}

std::vector<ExemplarView> PacEvolveSearch::SampleExemplars(const IslandState& is) {
  std::vector<ExemplarView> out;
  const std::vector<size_t> picked =
      sampler_.Sample(is.exemplars, static_cast<size_t>(options_.contrastive.exemplars), rng_);
  for (size_t i : picked) {
    const Exemplar& e = is.exemplars.entries()[i];
    ExemplarView v;
    v.candidate_id = e.candidate_id;
    v.runtime_ms = e.runtime_ms;
    v.score = e.score;
    auto it = candidates_.find(e.candidate_id);
    if (it != candidates_.end()) v.source = it->second.source;
    out.push_back(std::move(v));
  }
  return out;
}

StageRequest PacEvolveSearch::BuildRequest(IslandState& is) {
  StageRequest r;
  r.id = next_request_id_++;
  r.island = is.index;
  r.attempt = is.attempt;
  r.retry_reason = is.retry_reason;
  r.iteration = evaluations_;
  r.generation = is.generation;
  r.parent = ProgramOf(is.crossover_parent.empty() ? is.best_candidate_id : is.crossover_parent);
  if (options_.hcm) {
    r.ideas = is.pool.ideas();
    r.failures = failures_.entries();
  } else {
    r.history = is.history;
  }
  switch (is.phase) {
    case IslandPhase::kGenerateIdeas:
      r.stage = StageKind::kIdeaGeneration;
      r.ideas_wanted = options_.ideas_per_generation;
      r.exemplars = SampleExemplars(is);
      r.schema_name = IdeaGenerationReply::SchemaName();
      r.schema = IdeaGenerationReply::Schema();
      break;
    case IslandPhase::kClassify:
      r.stage = StageKind::kClassification;
      r.proposal = is.proposals[is.next_proposal];
      r.schema_name = ClassificationReply::SchemaName();
      r.schema = ClassificationReply::Schema();
      break;
    case IslandPhase::kSelect:
      r.stage = StageKind::kSelection;
      r.exemplars = SampleExemplars(is);
      r.schema_name = SelectionReply::SchemaName();
      r.schema = SelectionReply::Schema();
      break;
    case IslandPhase::kImplement:
      r.stage = StageKind::kImplementation;
      r.idea_id = is.selected_idea;
      r.experiment = is.experiment;
      r.exemplars = SampleExemplars(is);
      break;
    case IslandPhase::kSummarize:
      r.stage = StageKind::kSummarization;
      r.idea_id = is.summarize_idea;
      r.schema_name = SummaryReply::SchemaName();
      r.schema = SummaryReply::Schema();
      break;
    case IslandPhase::kPrune:
      r.stage = StageKind::kPruning;
      r.max_ideas = options_.max_ideas;
      r.schema_name = PruningReply::SchemaName();
      r.schema = PruningReply::Schema();
      break;
    case IslandPhase::kEvaluating:
      break;  // NextRequest never builds one for an evaluating island
  }
  is.outstanding_request = r.id;
  is.outstanding_stage = r.stage;
  return r;
}

Result<IslandState*> PacEvolveSearch::IslandForRequest(uint64_t request_id, StageKind expected) {
  for (IslandState& is : islands_) {
    if (request_id == 0 || is.outstanding_request != request_id) continue;
    if (is.outstanding_stage != expected) {
      return Error::BadInput(fmt::format("request {} is a {} request, not {}", request_id,
                                         StageName(is.outstanding_stage), StageName(expected)));
    }
    return &is;
  }
  return Error::NotFound(fmt::format("no request {} is in flight", request_id));
}

void PacEvolveSearch::Emit(std::string type, int island, json detail) {
  events_.push_back({std::move(type), island, evaluations_, std::move(detail)});
}

std::vector<SearchEvent> PacEvolveSearch::DrainEvents() {
  std::vector<SearchEvent> out = std::move(events_);
  events_.clear();
  return out;
}

// ---------------------------------------------------------------------------
// Iteration flow

ReplyResult PacEvolveSearch::Reject(IslandState& is, std::string reason) {
  is.outstanding_request = 0;
  ++is.attempt;
  if (is.attempt > options_.stage_retries) {
    is.attempt = 0;
    is.retry_reason.clear();
    return {ReplyVerdict::kGaveUp, std::move(reason)};
  }
  is.retry_reason = reason;
  return {ReplyVerdict::kRetry, std::move(reason)};
}

void PacEvolveSearch::GiveUp(IslandState& is, StageKind stage) {
  switch (stage) {
    case StageKind::kIdeaGeneration:
      // Without new ideas the iteration goes on with the pool it has.
      is.phase = is.pool.empty() ? IslandPhase::kGenerateIdeas : IslandPhase::kSelect;
      break;
    case StageKind::kClassification:
      AdvanceClassification(is);  // drop this proposal
      break;
    case StageKind::kSelection:
    case StageKind::kImplementation:
      // A fresh iteration, nothing recorded. An island that keeps ending
      // iterations this way is stuck where it is, whatever its momentum says.
      ++is.fruitless_iterations;
      if (options_.mbb && options_.fruitless_limit > 0 &&
          is.fruitless_iterations >= options_.fruitless_limit) {
        is.fruitless_iterations = 0;
        Intervene(is, "fruitless");  // moves the island on itself
        break;
      }
      StartIteration(is);
      break;
    case StageKind::kSummarization:
      AfterSummary(is);  // the hypotheses stay; summarising is retried next time
      break;
    case StageKind::kPruning: {
      // The LLM did not produce a usable cut: drop the ideas ranked lowest.
      const std::vector<int> ranked = is.pool.RankedIds();
      std::vector<int> drop;
      for (size_t k = static_cast<size_t>(options_.max_ideas); k < ranked.size(); ++k) {
        drop.push_back(ranked[k]);
      }
      PruneIdeas(is, drop, "fallback: lowest-ranked ideas after the pruning retries ran out",
                 /*fallback=*/true);
      FinishIteration(is);
      break;
    }
  }
}

void PacEvolveSearch::StartIteration(IslandState& is) {
  is.attempt = 0;
  is.retry_reason.clear();
  is.proposals.clear();
  is.next_proposal = 0;
  is.imported_ideas.clear();
  is.import_partner = -1;
  is.selected_idea = -1;
  is.experiment.clear();
  is.summarize_idea = -1;
  if (!options_.hcm) {
    is.phase = IslandPhase::kImplement;
  } else if (is.pool.empty() || is.generation % options_.idea_generation_interval == 0) {
    is.phase = IslandPhase::kGenerateIdeas;
  } else {
    is.phase = IslandPhase::kSelect;
  }
}

void PacEvolveSearch::AdvanceClassification(IslandState& is) {
  ++is.next_proposal;
  if (is.next_proposal < is.proposals.size()) {
    is.phase = IslandPhase::kClassify;
    return;
  }
  const bool were_imports = is.import_partner >= 0;
  is.proposals.clear();
  is.next_proposal = 0;
  is.imported_ideas.clear();
  is.import_partner = -1;
  if (were_imports) {
    AfterSummary(is);  // the crossover ends the iteration: prune if needed, snapshot
    return;
  }
  is.phase = is.pool.empty() ? IslandPhase::kGenerateIdeas : IslandPhase::kSelect;
}

void PacEvolveSearch::AfterRecord(IslandState& is) {
  if (options_.hcm && is.pool.NeedsSummary(is.selected_idea)) {
    is.summarize_idea = is.selected_idea;
    is.phase = IslandPhase::kSummarize;
    return;
  }
  AfterSummary(is);
}

void PacEvolveSearch::AfterSummary(IslandState& is) {
  is.summarize_idea = -1;
  if (options_.hcm && is.pool.NeedsPrune()) {
    is.phase = IslandPhase::kPrune;
    return;
  }
  FinishIteration(is);
}

void PacEvolveSearch::FinishIteration(IslandState& is) {
  is.trajectory.push_back(Snapshot(is));
  StartIteration(is);
}

IslandSnapshot PacEvolveSearch::Snapshot(const IslandState& is) const {
  IslandSnapshot s;
  s.generation = is.generation;
  s.pool = is.pool;
  s.history = is.history;
  s.exemplar_count = is.exemplars.size();
  s.best_candidate_id = is.best_candidate_id;
  s.best_runtime_ms = is.best_runtime_ms;
  return s;
}

// ---------------------------------------------------------------------------
// Stage replies

Result<ReplyResult> PacEvolveSearch::ObserveIdeas(uint64_t request_id,
                                                  const IdeaGenerationReply& reply) {
  Result<IslandState*> found = IslandForRequest(request_id, StageKind::kIdeaGeneration);
  if (!found.ok()) return found.error();
  IslandState& is = **found;
  std::vector<IdeaProposal> proposals;
  for (const IdeaProposal& p : reply.ideas) {
    if (FailureLog::NormalizedWords(p.description).empty()) continue;
    proposals.push_back(p);
    if (static_cast<int>(proposals.size()) == options_.ideas_per_generation) break;
  }
  if (proposals.empty()) {
    ReplyResult r = Reject(is, "the reply proposed no idea with a description");
    if (r.verdict == ReplyVerdict::kGaveUp) GiveUp(is, StageKind::kIdeaGeneration);
    return r;
  }
  is.outstanding_request = 0;
  is.attempt = 0;
  is.retry_reason.clear();
  is.proposals = std::move(proposals);
  is.next_proposal = 0;
  is.phase = IslandPhase::kClassify;
  return ReplyResult{};
}

Result<ReplyResult> PacEvolveSearch::ObserveClassification(uint64_t request_id,
                                                           const ClassificationReply& reply) {
  Result<IslandState*> found = IslandForRequest(request_id, StageKind::kClassification);
  if (!found.ok()) return found.error();
  IslandState& is = **found;
  const IdeaProposal& proposal = is.proposals[is.next_proposal];
  auto reject = [&](std::string reason) {
    ReplyResult r = Reject(is, std::move(reason));
    if (r.verdict == ReplyVerdict::kGaveUp) GiveUp(is, StageKind::kClassification);
    return r;
  };

  if (reply.idea_exists) {
    const int id = reply.idea_id.value_or(-1);
    const Idea* idea = is.pool.Find(id);
    if (idea == nullptr) {
      return reject(fmt::format("idea id {} is not in the pool (ids: {})", id, IdList(is.pool)));
    }
    if (FailureLog::NormalizedWords(reply.description).empty()) {
      return reject("the merged description is empty");
    }
    const int sentences = CountSentences(reply.description);
    if (sentences > 2) {
      return reject(fmt::format(
          "the merged description has {} sentences; at most two are allowed (if the merge "
          "cannot be said in two sentences, classify the proposal as a new idea)",
          sentences));
    }
    json detail = {{"idea_id", id},
                   {"previous_description", idea->description},
                   {"description", reply.description},
                   {"proposal", proposal.description}};
    if (is.import_partner >= 0) detail["origin_island"] = is.import_partner;
    (void)is.pool.Merge(id, reply.description);
    Emit("idea_merged", is.index, std::move(detail));
  } else {
    const std::string description = FailureLog::NormalizedWords(reply.description).empty()
                                        ? proposal.description
                                        : reply.description;
    if (const FailureEntry* known = failures_.FindMatch(FailureKind::kPrunedIdea, description)) {
      Emit("idea_rejected", is.index,
           {{"description", description},
            {"matches", known->text},
            {"pruned_on_island", known->island},
            {"pruned_at_iteration", known->iteration}});
    } else if (is.import_partner >= 0) {
      Idea imported = is.imported_ideas[is.next_proposal];
      const int origin_id = imported.id;
      imported.description = description;
      const int id = is.pool.Import(imported, is.import_partner);
      Emit("idea_added", is.index,
           {{"idea_id", id},
            {"description", description},
            {"reasoning", imported.reasoning},
            {"origin_island", is.import_partner},
            {"origin_idea_id", origin_id}});
    } else {
      const int id = is.pool.Add(description, proposal.reasoning);
      Emit("idea_added", is.index,
           {{"idea_id", id}, {"description", description}, {"reasoning", proposal.reasoning}});
    }
  }
  is.outstanding_request = 0;
  is.attempt = 0;
  is.retry_reason.clear();
  AdvanceClassification(is);
  return ReplyResult{};
}

Result<ReplyResult> PacEvolveSearch::ObserveSelection(uint64_t request_id,
                                                      const SelectionReply& reply) {
  Result<IslandState*> found = IslandForRequest(request_id, StageKind::kSelection);
  if (!found.ok()) return found.error();
  IslandState& is = **found;
  auto reject = [&](std::string reason) {
    ReplyResult r = Reject(is, std::move(reason));
    if (r.verdict == ReplyVerdict::kGaveUp) GiveUp(is, StageKind::kSelection);
    return r;
  };
  if (!is.pool.Contains(reply.idea_id)) {
    return reject(fmt::format("idea id {} is not in the pool; choose one of: {}", reply.idea_id,
                              IdList(is.pool)));
  }
  if (FailureLog::NormalizedWords(reply.experiment).empty()) {
    return reject("the experiment description is empty");
  }
  if (const FailureEntry* known =
          failures_.FindMatch(FailureKind::kRejectedHypothesis, reply.experiment)) {
    Emit("hypothesis_rejected", is.index,
         {{"idea_id", reply.idea_id},
          {"experiment", reply.experiment},
          {"matches", known->text},
          {"reason", known->reason}});
    return reject(fmt::format("this experiment was already tried and failed: \"{}\" ({})",
                              known->text, known->reason));
  }
  is.outstanding_request = 0;
  is.attempt = 0;
  is.retry_reason.clear();
  is.selected_idea = reply.idea_id;
  is.experiment = reply.experiment;
  is.phase = IslandPhase::kImplement;
  return ReplyResult{};
}

Result<ReplyResult> PacEvolveSearch::ObserveSummary(uint64_t request_id,
                                                    const SummaryReply& reply) {
  Result<IslandState*> found = IslandForRequest(request_id, StageKind::kSummarization);
  if (!found.ok()) return found.error();
  IslandState& is = **found;
  if (FailureLog::NormalizedWords(reply.key_findings).empty()) {
    ReplyResult r = Reject(is, "the key findings are empty");
    if (r.verdict == ReplyVerdict::kGaveUp) GiveUp(is, StageKind::kSummarization);
    return r;
  }
  const Idea* idea = is.pool.Find(is.summarize_idea);
  const int count = idea ? static_cast<int>(idea->hypotheses.size()) : 0;
  (void)is.pool.ApplySummary(is.summarize_idea, reply.key_findings);
  Emit("hypotheses_summarized", is.index,
       {{"idea_id", is.summarize_idea},
        {"hypotheses", count},
        {"key_findings", reply.key_findings}});
  is.outstanding_request = 0;
  is.attempt = 0;
  is.retry_reason.clear();
  AfterSummary(is);
  return ReplyResult{};
}

void PacEvolveSearch::PruneIdeas(IslandState& is, const std::vector<int>& ids,
                                 const std::string& rationale, bool fallback) {
  Result<std::vector<Idea>> removed = is.pool.Remove(ids);
  if (!removed.ok()) return;  // callers pass ids they checked
  for (const Idea& idea : *removed) {
    FailureEntry e;
    e.kind = FailureKind::kPrunedIdea;
    e.text = idea.description;
    e.island = is.index;
    e.idea_id = idea.id;
    e.iteration = evaluations_;
    e.runtime_ms = idea.best_runtime_ms;
    e.reason = rationale;
    failures_.Add(std::move(e));
    json detail = {{"idea_id", idea.id},
                   {"description", idea.description},
                   {"hypotheses", idea.TotalHypotheses()},
                   {"best_runtime_ms", nullptr},
                   {"rationale", rationale},
                   {"fallback", fallback}};
    if (idea.best_runtime_ms) detail["best_runtime_ms"] = *idea.best_runtime_ms;
    Emit("idea_pruned", is.index, std::move(detail));
  }
}

Result<ReplyResult> PacEvolveSearch::ObservePruning(uint64_t request_id,
                                                    const PruningReply& reply) {
  Result<IslandState*> found = IslandForRequest(request_id, StageKind::kPruning);
  if (!found.ok()) return found.error();
  IslandState& is = **found;
  auto reject = [&](std::string reason) {
    ReplyResult r = Reject(is, std::move(reason));
    if (r.verdict == ReplyVerdict::kGaveUp) GiveUp(is, StageKind::kPruning);
    return r;
  };
  std::set<int> seen;
  for (int id : reply.drop_idea_ids) {
    if (!is.pool.Contains(id)) {
      return reject(fmt::format("idea id {} is not in the pool (ids: {})", id, IdList(is.pool)));
    }
    if (!seen.insert(id).second) return reject(fmt::format("idea id {} is listed twice", id));
  }
  if (reply.drop_idea_ids.empty()) {
    return reject(fmt::format("the pool holds {} ideas and the cap is {}; drop at least {}",
                              is.pool.size(), options_.max_ideas,
                              is.pool.size() - options_.max_ideas));
  }
  PruneIdeas(is, reply.drop_idea_ids, reply.rationale, /*fallback=*/false);
  if (is.pool.NeedsPrune()) {
    // The drops were applied; ask again for the rest.
    return reject(fmt::format("after dropping {} idea(s) the pool still holds {}; the cap is {}",
                              reply.drop_idea_ids.size(), is.pool.size(), options_.max_ideas));
  }
  is.outstanding_request = 0;
  is.attempt = 0;
  is.retry_reason.clear();
  FinishIteration(is);
  return ReplyResult{};
}

Status PacEvolveSearch::ObserveSubmitted(uint64_t request_id, std::string candidate_id) {
  Result<IslandState*> found = IslandForRequest(request_id, StageKind::kImplementation);
  if (!found.ok()) return found.error();
  if (candidate_id.empty()) return Error::BadInput("candidate id is empty");
  if (!submitted_ids_.insert(candidate_id).second) {
    return Error::BadInput(fmt::format("candidate {} was already submitted", candidate_id));
  }
  IslandState& is = **found;
  is.outstanding_request = 0;
  is.attempt = 0;
  is.retry_reason.clear();
  is.evaluating_candidate = std::move(candidate_id);
  is.phase = IslandPhase::kEvaluating;
  return Status::Ok();
}

Result<ReplyResult> PacEvolveSearch::ObserveStageFailure(uint64_t request_id, std::string reason) {
  for (IslandState& is : islands_) {
    if (request_id == 0 || is.outstanding_request != request_id) continue;
    const StageKind stage = is.outstanding_stage;
    ReplyResult r = Reject(is, std::move(reason));
    if (r.verdict == ReplyVerdict::kGaveUp) GiveUp(is, stage);
    return r;
  }
  return Error::NotFound(fmt::format("no request {} is in flight", request_id));
}

// ---------------------------------------------------------------------------
// Evaluation, momentum and interventions

Status PacEvolveSearch::ObserveEvaluation(std::string_view candidate_id,
                                          const EvaluationOutcome& outcome) {
  IslandState* found = nullptr;
  for (IslandState& is : islands_) {
    if (is.phase == IslandPhase::kEvaluating && is.evaluating_candidate == candidate_id) {
      found = &is;
    }
  }
  if (found == nullptr || candidate_id.empty()) {
    return Error::NotFound(fmt::format("candidate {} is not being evaluated", candidate_id));
  }
  IslandState& is = *found;
  const std::string id(candidate_id);
  ++evaluations_;
  ++is.generation;

  const bool accepted = outcome.accepted && outcome.runtime_ms &&
                        std::isfinite(*outcome.runtime_ms) && *outcome.runtime_ms > 0.0;
  const double runtime = accepted ? *outcome.runtime_ms : kInfinity;
  const double previous_best = is.best_runtime_ms;
  const bool improved = accepted && runtime < previous_best;

  Hypothesis h;
  h.description = options_.hcm ? is.experiment : outcome.description;
  if (h.description.empty()) h.description = outcome.description;
  h.candidate_id = id;
  h.accepted = accepted;
  if (accepted) h.runtime_ms = runtime;
  h.outcome = !outcome.summary.empty()
                  ? outcome.summary
                  : (accepted ? fmt::format("{:.4g} ms", runtime) : std::string("not accepted"));
  h.iteration = evaluations_;

  if (accepted) {
    candidates_[id] = {outcome.source, runtime, is.index, evaluations_};
    is.exemplars.Add(id, runtime, is.index, evaluations_);
    if (runtime < is.best_ever_runtime_ms) {
      is.best_ever_runtime_ms = runtime;
      is.best_ever_candidate_id = id;
    }
    if (runtime < best_runtime_ms_) {
      best_runtime_ms_ = runtime;
      best_candidate_id_ = id;
    }
  }
  if (improved) {
    is.best_runtime_ms = runtime;
    is.best_candidate_id = id;
  }
  if (options_.hcm) {
    if (!improved) {
      FailureEntry e;
      e.kind = FailureKind::kRejectedHypothesis;
      e.text = is.experiment;
      e.island = is.index;
      e.idea_id = is.selected_idea;
      e.iteration = evaluations_;
      if (accepted) e.runtime_ms = runtime;
      e.reason = accepted ? fmt::format("no improvement: {:.4g} ms against the best {:.4g} ms",
                                        runtime, previous_best)
                          : fmt::format("not accepted: {}", h.outcome);
      failures_.Add(std::move(e));
    }
    (void)is.pool.Record(is.selected_idea, std::move(h));
  } else {
    is.history.push_back(std::move(h));
  }

  is.momentum.Observe(runtime);
  is.crossover_parent.clear();
  is.evaluating_candidate.clear();
  is.fruitless_iterations = 0;

  const bool past_freeze = is.generation - is.last_intervention > options_.freeze_iterations;
  if (options_.mbb && past_freeze && is.momentum.Stagnant(options_.stagnation_threshold)) {
    Intervene(is, "momentum");
    return Status::Ok();
  }
  AfterRecord(is);
  return Status::Ok();
}

void PacEvolveSearch::Intervene(IslandState& is, std::string_view trigger) {
  std::vector<double> progress;
  for (const IslandState& other : islands_) {
    progress.push_back(AbsoluteProgress(baseline_ms_, other.best_ever_runtime_ms, target_ms_));
  }
  json detail = {{"trigger", trigger},
                 {"momentum", is.momentum.momentum()},
                 {"stagnation_threshold", options_.stagnation_threshold},
                 {"generation", is.generation},
                 {"absolute_progress", progress},
                 {"collaborative", options_.ce && num_islands() > 1}};
  is.last_intervention = is.generation;
  if (!options_.ce || num_islands() == 1) {
    detail["action_probability"] = 1.0;
    Backtrack(is, std::move(detail));
    return;
  }
  const ActionWeights w = ComputeActionWeights(is.index, progress);
  const Intervention choice = SampleIntervention(w, rng_);
  detail["weights"] = {{"backtrack", w.backtrack},
                       {"crossover", w.crossover},
                       {"similarity", w.similarity},
                       {"best_partner", w.best_partner}};
  detail["action_probability"] = choice.probability;
  if (choice.kind == Intervention::Kind::kBacktrack) {
    Backtrack(is, std::move(detail));
  } else {
    Crossover(is, choice.partner, std::move(detail));
  }
}

void PacEvolveSearch::Backtrack(IslandState& is, json detail) {
  const size_t states = is.trajectory.size();
  const size_t k = SampleBacktrackState(states, options_.backtrack_power, rng_);
  const IslandSnapshot snap = is.trajectory[k];
  detail["from_generation"] = is.generation;
  detail["from_best_runtime_ms"] = is.best_runtime_ms;
  detail["states"] = states;
  detail["to_state"] = k;
  detail["to_generation"] = snap.generation;
  detail["state_probability"] = BacktrackDistribution(states, options_.backtrack_power)[k];
  detail["to_best_runtime_ms"] = snap.best_runtime_ms;
  detail["to_best_candidate_id"] = snap.best_candidate_id;

  is.pool.RestoreFrom(snap.pool);
  is.history = snap.history;
  is.exemplars.Truncate(snap.exemplar_count);
  is.best_candidate_id = snap.best_candidate_id;
  is.best_runtime_ms = snap.best_runtime_ms;
  is.momentum.Restart(snap.best_runtime_ms);
  is.trajectory.resize(k + 1);  // the abandoned branch is forgotten
  ++is.backtracks;
  Emit("backtrack", is.index, std::move(detail));
  StartIteration(is);
}

void PacEvolveSearch::Crossover(IslandState& is, int partner_index, json detail) {
  const IslandState& partner = islands_.at(partner_index);
  detail["partner"] = partner_index;
  detail["partner_best_candidate_id"] = partner.best_ever_candidate_id;
  detail["partner_best_runtime_ms"] = partner.best_ever_runtime_ms;
  bool adopted = false;
  if (!partner.best_ever_candidate_id.empty()) {
    const std::string& pid = partner.best_ever_candidate_id;
    is.exemplars.Add(pid, partner.best_ever_runtime_ms, partner_index, evaluations_);
    is.crossover_parent = pid;
    if (partner.best_ever_runtime_ms < is.best_runtime_ms) {
      is.best_runtime_ms = partner.best_ever_runtime_ms;
      is.best_candidate_id = pid;
      adopted = true;
    }
    if (partner.best_ever_runtime_ms < is.best_ever_runtime_ms) {
      is.best_ever_runtime_ms = partner.best_ever_runtime_ms;
      is.best_ever_candidate_id = pid;
    }
  }
  detail["adopted_as_best"] = adopted;

  // The partner's best ideas go through classification like any proposal.
  json offered = json::array();
  if (options_.hcm) {
    is.proposals.clear();
    is.imported_ideas.clear();
    for (int id : partner.pool.RankedIds()) {
      if (static_cast<int>(is.imported_ideas.size()) == options_.crossover_ideas) break;
      const Idea* idea = partner.pool.Find(id);
      is.proposals.push_back({idea->description, idea->reasoning});
      is.imported_ideas.push_back(*idea);
      offered.push_back(id);
    }
  }
  detail["offered_ideas"] = offered;
  is.momentum.Restart(is.best_runtime_ms);
  ++is.crossovers;
  Emit("crossover", is.index, std::move(detail));
  if (!is.proposals.empty()) {
    is.import_partner = partner_index;
    is.next_proposal = 0;
    is.attempt = 0;
    is.retry_reason.clear();
    is.phase = IslandPhase::kClassify;
    return;
  }
  AfterSummary(is);
}

// ---------------------------------------------------------------------------
// Introspection and persistence

std::optional<ProgramRef> PacEvolveSearch::BestProgram() const {
  if (best_candidate_id_.empty()) return std::nullopt;
  return ProgramOf(best_candidate_id_);
}

std::vector<std::pair<int, std::string>> PacEvolveSearch::PendingEvaluations() const {
  std::vector<std::pair<int, std::string>> out;
  for (const IslandState& is : islands_) {
    if (is.phase == IslandPhase::kEvaluating) out.emplace_back(is.index, is.evaluating_candidate);
  }
  return out;
}

namespace {

json OptionsToJson(const PacEvolveOptions& o) {
  return {{"islands", o.islands},
          {"momentum_beta", o.momentum_beta},
          {"stagnation_threshold", o.stagnation_threshold},
          {"freeze_iterations", o.freeze_iterations},
          {"backtrack_power", o.backtrack_power},
          {"target_ms", o.target_ms},
          {"max_ideas", o.max_ideas},
          {"max_hypotheses", o.max_hypotheses},
          {"ideas_per_generation", o.ideas_per_generation},
          {"idea_generation_interval", o.idea_generation_interval},
          {"failure_match_threshold", o.failure_match_threshold},
          {"crossover_ideas", o.crossover_ideas},
          {"stage_retries", o.stage_retries},
          {"fruitless_limit", o.fruitless_limit},
          {"hcm", o.hcm},
          {"mbb", o.mbb},
          {"ce", o.ce},
          {"contrastive",
           {{"exemplars", o.contrastive.exemplars},
            {"temperature", o.contrastive.temperature},
            {"bucket_width", o.contrastive.bucket_width},
            {"score", ScoreKindName(o.contrastive.score)}}}};
}

Result<PacEvolveOptions> OptionsFromJson(const json& j) {
  PacEvolveOptions o;
  o.islands = j.at("islands").get<int>();
  o.momentum_beta = j.at("momentum_beta").get<double>();
  o.stagnation_threshold = j.at("stagnation_threshold").get<double>();
  o.freeze_iterations = j.at("freeze_iterations").get<int>();
  o.backtrack_power = j.at("backtrack_power").get<double>();
  o.target_ms = j.at("target_ms").get<double>();
  o.max_ideas = j.at("max_ideas").get<int>();
  o.max_hypotheses = j.at("max_hypotheses").get<int>();
  o.ideas_per_generation = j.at("ideas_per_generation").get<int>();
  o.idea_generation_interval = j.at("idea_generation_interval").get<int>();
  o.failure_match_threshold = j.at("failure_match_threshold").get<double>();
  o.crossover_ideas = j.at("crossover_ideas").get<int>();
  o.stage_retries = j.at("stage_retries").get<int>();
  o.fruitless_limit = j.at("fruitless_limit").get<int>();
  o.hcm = j.at("hcm").get<bool>();
  o.mbb = j.at("mbb").get<bool>();
  o.ce = j.at("ce").get<bool>();
  const json& c = j.at("contrastive");
  o.contrastive.exemplars = c.at("exemplars").get<int>();
  o.contrastive.temperature = c.at("temperature").get<double>();
  o.contrastive.bucket_width = c.at("bucket_width").get<double>();
  Result<ScoreKind> kind = ParseScoreKind(c.at("score").get<std::string>());
  if (!kind.ok()) return kind.error();
  o.contrastive.score = *kind;
  if (Status s = ValidatePacEvolveOptions(o); !s.ok()) return s.error();
  return o;
}

json SnapshotToJson(const IslandSnapshot& s) {
  return {{"generation", s.generation},
          {"pool", s.pool.ToJson()},
          {"history", ArrayOf(s.history)},
          {"exemplar_count", s.exemplar_count},
          {"best_candidate_id", s.best_candidate_id},
          {"best_runtime_ms", s.best_runtime_ms}};
}

Result<std::vector<Hypothesis>> HypothesesFromJson(const json& j) {
  std::vector<Hypothesis> out;
  for (const json& h : j) {
    Result<Hypothesis> hyp = Hypothesis::FromJson(h);
    if (!hyp.ok()) return hyp.error();
    out.push_back(std::move(*hyp));
  }
  return out;
}

Result<IslandSnapshot> SnapshotFromJson(const json& j) {
  IslandSnapshot s;
  s.generation = j.at("generation").get<int64_t>();
  Result<IdeaPool> pool = IdeaPool::FromJson(j.at("pool"));
  if (!pool.ok()) return pool.error();
  s.pool = std::move(*pool);
  Result<std::vector<Hypothesis>> history = HypothesesFromJson(j.at("history"));
  if (!history.ok()) return history.error();
  s.history = std::move(*history);
  s.exemplar_count = j.at("exemplar_count").get<size_t>();
  s.best_candidate_id = j.at("best_candidate_id").get<std::string>();
  s.best_runtime_ms = j.at("best_runtime_ms").get<double>();
  return s;
}

Result<IslandPhase> PhaseFromName(const std::string& name) {
  for (IslandPhase p : {IslandPhase::kGenerateIdeas, IslandPhase::kClassify, IslandPhase::kSelect,
                        IslandPhase::kImplement, IslandPhase::kEvaluating, IslandPhase::kSummarize,
                        IslandPhase::kPrune}) {
    if (IslandPhaseName(p) == name) return p;
  }
  return Error::BadInput(fmt::format("unknown island phase '{}'", name));
}

}  // namespace

Status PacEvolveSearch::SetTarget(double target_ms) {
  if (evaluations_ > 0) {
    return Error::BadInput("the target can only be set before the first evaluation");
  }
  if (!std::isfinite(target_ms) || target_ms < 0.0 || target_ms >= baseline_ms_) {
    return Error::BadInput(
        fmt::format("target runtime must be in [0, {}) (below the starting runtime), got {}",
                    baseline_ms_, target_ms));
  }
  target_ms_ = target_ms;
  for (IslandState& is : islands_) {
    is.momentum = MomentumTracker(options_.momentum_beta, target_ms, baseline_ms_);
  }
  return Status::Ok();
}

json PacEvolveSearch::ToJson() const {
  json islands = json::array();
  for (const IslandState& is : islands_) {
    json proposals = json::array();
    for (const IdeaProposal& p : is.proposals) {
      proposals.push_back({{"description", p.description}, {"reasoning", p.reasoning}});
    }
    json trajectory = json::array();
    for (const IslandSnapshot& s : is.trajectory) trajectory.push_back(SnapshotToJson(s));
    islands.push_back({{"phase", IslandPhaseName(is.phase)},
                       {"attempt", is.attempt},
                       {"retry_reason", is.retry_reason},
                       {"proposals", proposals},
                       {"next_proposal", is.next_proposal},
                       {"imported_ideas", ArrayOf(is.imported_ideas)},
                       {"import_partner", is.import_partner},
                       {"selected_idea", is.selected_idea},
                       {"experiment", is.experiment},
                       {"evaluating_candidate", is.evaluating_candidate},
                       {"summarize_idea", is.summarize_idea},
                       {"crossover_parent", is.crossover_parent},
                       {"pool", is.pool.ToJson()},
                       {"history", ArrayOf(is.history)},
                       {"exemplars", is.exemplars.ToJson()},
                       {"momentum", is.momentum.ToJson()},
                       {"generation", is.generation},
                       {"last_intervention", is.last_intervention},
                       {"fruitless_iterations", is.fruitless_iterations},
                       {"best_candidate_id", is.best_candidate_id},
                       {"best_runtime_ms", is.best_runtime_ms},
                       {"best_ever_candidate_id", is.best_ever_candidate_id},
                       {"best_ever_runtime_ms", is.best_ever_runtime_ms},
                       {"trajectory", trajectory},
                       {"backtracks", is.backtracks},
                       {"crossovers", is.crossovers}});
  }
  json candidates = json::object();
  for (const auto& [id, c] : candidates_) {
    candidates[id] = {{"source", c.source},
                      {"runtime_ms", c.runtime_ms},
                      {"island", c.island},
                      {"iteration", c.iteration}};
  }
  return {{"format", "kforge.pacevolve.v1"},
          {"options", OptionsToJson(options_)},
          {"baseline_ms", baseline_ms_},
          {"target_ms", target_ms_},
          {"rng", rng_.SaveState()},
          {"failures", failures_.ToJson()},
          {"islands", islands},
          {"candidates", candidates},
          {"submitted", submitted_ids_},
          {"events", ArrayOf(events_)},
          {"next_request_id", next_request_id_},
          {"evaluations", evaluations_},
          {"cursor", cursor_},
          {"best_candidate_id", best_candidate_id_},
          {"best_runtime_ms", best_runtime_ms_}};
}

Result<PacEvolveSearch> PacEvolveSearch::FromJson(const json& j) {
  try {
    if (j.at("format") != "kforge.pacevolve.v1") {
      return Error::BadInput("not a kforge.pacevolve.v1 search state");
    }
    Result<PacEvolveOptions> options = OptionsFromJson(j.at("options"));
    if (!options.ok()) return options.error();
    const double baseline = j.at("baseline_ms").get<double>();
    const double target = j.at("target_ms").get<double>();
    Result<PacEvolveSearch> created = Create(*options, baseline, target, 0);
    if (!created.ok()) return created.error();
    PacEvolveSearch s = std::move(*created);
    if (Status st = s.rng_.RestoreState(j.at("rng").get<std::string>()); !st.ok()) {
      return st.error();
    }
    Result<FailureLog> failures =
        FailureLog::FromJson(j.at("failures"), options->failure_match_threshold);
    if (!failures.ok()) return failures.error();
    s.failures_ = std::move(*failures);

    const json& islands = j.at("islands");
    if (!islands.is_array() || islands.size() != s.islands_.size()) {
      return Error::BadInput("search state: island count does not match the options");
    }
    for (size_t i = 0; i < islands.size(); ++i) {
      const json& ji = islands[i];
      IslandState& is = s.islands_[i];
      Result<IslandPhase> phase = PhaseFromName(ji.at("phase").get<std::string>());
      if (!phase.ok()) return phase.error();
      is.phase = *phase;
      is.outstanding_request = 0;
      is.attempt = ji.at("attempt").get<int>();
      is.retry_reason = ji.at("retry_reason").get<std::string>();
      is.proposals.clear();
      for (const json& p : ji.at("proposals")) {
        is.proposals.push_back(
            {p.at("description").get<std::string>(), p.at("reasoning").get<std::string>()});
      }
      is.next_proposal = ji.at("next_proposal").get<size_t>();
      is.imported_ideas.clear();
      for (const json& idea : ji.at("imported_ideas")) {
        Result<Idea> parsed = Idea::FromJson(idea);
        if (!parsed.ok()) return parsed.error();
        is.imported_ideas.push_back(std::move(*parsed));
      }
      is.import_partner = ji.at("import_partner").get<int>();
      if (is.import_partner >= 0 && is.imported_ideas.size() != is.proposals.size()) {
        return Error::BadInput("search state: imported ideas do not match the proposals");
      }
      if (is.phase == IslandPhase::kClassify && is.next_proposal >= is.proposals.size()) {
        return Error::BadInput("search state: classification index out of range");
      }
      is.selected_idea = ji.at("selected_idea").get<int>();
      is.experiment = ji.at("experiment").get<std::string>();
      is.evaluating_candidate = ji.at("evaluating_candidate").get<std::string>();
      is.summarize_idea = ji.at("summarize_idea").get<int>();
      is.crossover_parent = ji.at("crossover_parent").get<std::string>();
      Result<IdeaPool> pool = IdeaPool::FromJson(ji.at("pool"));
      if (!pool.ok()) return pool.error();
      is.pool = std::move(*pool);
      Result<std::vector<Hypothesis>> history = HypothesesFromJson(ji.at("history"));
      if (!history.ok()) return history.error();
      is.history = std::move(*history);
      Result<ExemplarStore> store = ExemplarStore::FromJson(ji.at("exemplars"));
      if (!store.ok()) return store.error();
      is.exemplars = std::move(*store);
      Result<MomentumTracker> momentum = MomentumTracker::FromJson(ji.at("momentum"));
      if (!momentum.ok()) return momentum.error();
      is.momentum = std::move(*momentum);
      is.generation = ji.at("generation").get<int64_t>();
      is.last_intervention = ji.at("last_intervention").get<int64_t>();
      is.fruitless_iterations = ji.at("fruitless_iterations").get<int>();
      is.best_candidate_id = ji.at("best_candidate_id").get<std::string>();
      is.best_runtime_ms = ji.at("best_runtime_ms").get<double>();
      is.best_ever_candidate_id = ji.at("best_ever_candidate_id").get<std::string>();
      is.best_ever_runtime_ms = ji.at("best_ever_runtime_ms").get<double>();
      is.trajectory.clear();
      for (const json& snap : ji.at("trajectory")) {
        Result<IslandSnapshot> snapshot = SnapshotFromJson(snap);
        if (!snapshot.ok()) return snapshot.error();
        is.trajectory.push_back(std::move(*snapshot));
      }
      if (is.trajectory.empty()) return Error::BadInput("search state: empty trajectory");
      is.backtracks = ji.at("backtracks").get<int>();
      is.crossovers = ji.at("crossovers").get<int>();
    }
    s.candidates_.clear();
    for (const auto& [id, c] : j.at("candidates").items()) {
      s.candidates_[id] = {c.at("source").get<std::string>(), c.at("runtime_ms").get<double>(),
                           c.at("island").get<int>(), c.at("iteration").get<int64_t>()};
    }
    s.submitted_ids_ = j.at("submitted").get<std::set<std::string>>();
    s.events_.clear();
    for (const json& e : j.at("events")) {
      s.events_.push_back({e.at("type").get<std::string>(), e.at("island").get<int>(),
                           e.at("iteration").get<int64_t>(), e.at("detail")});
    }
    s.next_request_id_ = j.at("next_request_id").get<uint64_t>();
    s.evaluations_ = j.at("evaluations").get<int64_t>();
    s.cursor_ = j.at("cursor").get<int>() % s.num_islands();
    s.best_candidate_id_ = j.at("best_candidate_id").get<std::string>();
    s.best_runtime_ms_ = j.at("best_runtime_ms").get<double>();
    return s;
  } catch (const json::exception& e) {
    return Error::BadInput(fmt::format("search state JSON: {}", e.what()));
  }
}

}  // namespace kforge::search::pacevolve
