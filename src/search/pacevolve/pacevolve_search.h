// PacEvolveSearch: the PACEvolve scaffold as a deterministic state machine
// with no LLM, store or I/O inside. The optimize loop drives it:
//
//   while (budget left) {
//     auto req = search.NextRequest();      // which LLM stage to run, and with what
//     if (!req) { wait for an evaluation; search.ObserveEvaluation(...); continue; }
//     render req->ToJson() with the stage's prompt template, call the LLM
//     (JSON schema req->schema for structured stages), then one of
//       search.ObserveIdeas / ObserveClassification / ObserveSelection /
//       ObserveSummary / ObservePruning (parsed reply),
//       search.ObserveSubmitted (implementation: the candidate went to evaluation),
//       search.ObserveStageFailure (the call failed or the reply was unusable);
//     store search.DrainEvents() and search.ToJson().
//   }
//
// One iteration of an island (HCM on, Algorithm 1): idea generation →
// classification of each proposal (merge into an idea or add one) →
// selection (an idea id and an experiment; an unknown id or a known failure
// is sent back for a retry) → implementation (code; evaluated outside) →
// record the result as a hypothesis under its idea → summarise the idea if it
// holds more than K_hyp hypotheses → prune the pool if it holds more than
// K_idea ideas. With HCM off an iteration is one implementation call with an
// append-only history of every earlier attempt (the paper's vanilla setup).
//
// After each evaluation the island's momentum is updated (MBB, momentum.h).
// Once the freeze period has passed and m_t < ε_rel, the island intervenes
// (it also does after pacevolve.fruitless_limit iterations in a row that
// produced no candidate, e.g. because every proposal was a known failure):
// with CE on and several islands it samples backtrack or crossover_j from the
// weights of crossover_policy.h; otherwise it backtracks. A backtrack restores
// the island's context (idea pool or history, exemplar store, best program,
// momentum m = 1) to an earlier end-of-iteration snapshot drawn from the power
// law of momentum.h; the abandoned branch is dropped from the trajectory. The
// failure log is permanent and shared by all islands. A crossover copies the
// partner's best program (the next implementation edits it; the island adopts
// it as its best when it is faster) and offers the partner's top ideas to the
// classification stage: like any proposal, an idea the pool already holds
// refines it, and a new one joins with its hypotheses and findings.
//
// Islands run concurrently: each has at most one request or evaluation in
// flight, and NextRequest serves the ready islands in turn.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/result.h"
#include "search/contrastive/bucket_sampler.h"
#include "search/contrastive/exemplar_store.h"
#include "search/contrastive/rng.h"
#include "search/pacevolve/failure_log.h"
#include "search/pacevolve/idea_pool.h"
#include "search/pacevolve/momentum.h"
#include "search/pacevolve/search_config.h"
#include "search/pacevolve/stage_replies.h"

namespace kforge::search::pacevolve {

enum class StageKind {
  kIdeaGeneration,
  kClassification,
  kSelection,
  kImplementation,
  kSummarization,
  kPruning,
};
std::string_view StageName(StageKind stage);

// A program the prompt can show: an accepted candidate, or the task's
// reference program (empty candidate_id and source; runtime = the baseline).
struct ProgramRef {
  std::string candidate_id;
  double runtime_ms = 0.0;
  std::string source;
  nlohmann::json ToJson() const;
};

// A scored exemplar for the "state of the art" section (CUDA-L1 buckets).
struct ExemplarView {
  std::string candidate_id;
  double runtime_ms = 0.0;
  double score = 0.0;  // contrastive.score: speedup over the baseline, or −runtime
  std::string source;
  nlohmann::json ToJson() const;
};

struct StageRequest {
  uint64_t id = 0;
  StageKind stage = StageKind::kIdeaGeneration;
  int island = 0;
  int attempt = 0;           // 0 on the first try of this stage
  std::string retry_reason;  // why the previous reply was sent back
  int64_t iteration = 0;     // evaluations recorded in the run so far
  int64_t generation = 0;    // evaluations recorded on this island so far

  // Context for the prompt (what each stage uses is in docs/search.md).
  std::vector<Idea> ideas;              // the island's idea pool (HCM)
  std::vector<Hypothesis> history;      // append-only attempts (HCM off)
  std::vector<FailureEntry> failures;   // the permanent failure log (HCM)
  std::vector<ExemplarView> exemplars;  // sampled from the island's exemplar store
  ProgramRef parent;                    // the program to improve

  // Stage-specific.
  std::optional<IdeaProposal> proposal;  // classification: the idea to classify
  int idea_id = -1;         // summarization: the idea; implementation: the selected idea
  std::string experiment;   // implementation: the selected experiment
  int ideas_wanted = 0;     // idea generation
  int max_ideas = 0;        // pruning: K_idea, the size to prune down to
  std::string schema_name;  // structured stages: name and JSON schema of the reply;
  nlohmann::json schema;    // empty for implementation (plain text with a code block)

  nlohmann::json ToJson() const;
};

struct EvaluationOutcome {
  bool accepted = false;             // CONTRACT's `accepted`
  std::optional<double> runtime_ms;  // timing.candidate_ms.median when accepted
  std::string source;                // the candidate's source, for exemplars and crossover
  // What was tried, for the history when HCM is off (for instance the
  // "Algorithm Design" section of the reply). With HCM the selected experiment
  // is recorded instead.
  std::string description;
  std::string summary;  // short result text for the record ("compile error: …")
};

// Event for the run's event log; `type` is one of the CONTRACT event types
// (backtrack, crossover, idea_added, idea_merged, idea_pruned,
// hypotheses_summarized) or an extra one (idea_rejected, hypothesis_rejected:
// a proposal matched the failure log). `iteration` = evaluations recorded in
// the run when the event happened.
struct SearchEvent {
  std::string type;
  int island = 0;
  int64_t iteration = 0;
  nlohmann::json detail;
  nlohmann::json ToJson() const;
};

enum class ReplyVerdict {
  kAccepted,  // applied
  kRetry,     // rejected; the island asks the same stage again (attempt + 1)
  kGaveUp,    // rejected after the last retry; the island moved on without it
};
struct ReplyResult {
  ReplyVerdict verdict = ReplyVerdict::kAccepted;
  std::string reason;
};

enum class IslandPhase {
  kGenerateIdeas,
  kClassify,
  kSelect,
  kImplement,
  kEvaluating,
  kSummarize,
  kPrune,
};
std::string_view IslandPhaseName(IslandPhase phase);

// The island's context at the end of one iteration, for backtracking.
struct IslandSnapshot {
  int64_t generation = 0;
  IdeaPool pool{1, 1};
  std::vector<Hypothesis> history;
  size_t exemplar_count = 0;
  std::string best_candidate_id;
  double best_runtime_ms = 0.0;
};

struct IslandState {
  IslandState(int index, const PacEvolveOptions& options, double baseline_ms, double target_ms);

  int index = 0;
  IslandPhase phase = IslandPhase::kGenerateIdeas;

  // The iteration in progress.
  uint64_t outstanding_request = 0;  // 0: none
  StageKind outstanding_stage = StageKind::kIdeaGeneration;
  int attempt = 0;
  std::string retry_reason;
  std::vector<IdeaProposal> proposals;  // awaiting classification
  size_t next_proposal = 0;
  // Set while the proposals are a crossover partner's ideas (index-aligned):
  // a new one is imported with its record, a match refines the island's idea.
  std::vector<Idea> imported_ideas;
  int import_partner = -1;
  int selected_idea = -1;
  std::string experiment;
  std::string evaluating_candidate;
  int summarize_idea = -1;
  std::string crossover_parent;  // candidate the next implementation edits

  // The island's context.
  IdeaPool pool;
  std::vector<Hypothesis> history;
  ExemplarStore exemplars;
  MomentumTracker momentum;
  int64_t generation = 0;         // evaluations recorded on this island
  int64_t last_intervention = 0;  // generation of the last backtrack/crossover
  int fruitless_iterations = 0;   // iterations in a row that ended without a candidate
  std::string best_candidate_id;  // best of the current trajectory ("" = reference)
  double best_runtime_ms = 0.0;
  std::string best_ever_candidate_id;  // best this island ever held (for A_i)
  double best_ever_runtime_ms = 0.0;
  std::vector<IslandSnapshot> trajectory;  // [0] = the initial state
  int backtracks = 0;
  int crossovers = 0;
};

class PacEvolveSearch {
 public:
  // baseline_ms: s_0, the runtime of the program every island starts from
  // (the task's reference). target_ms: r (see ResolveTarget). seed: the one
  // source of randomness; equal seeds and equal observations give equal runs.
  static Result<PacEvolveSearch> Create(const PacEvolveOptions& options, double baseline_ms,
                                        double target_ms, uint64_t seed);

  // The next LLM stage to run, for the first ready island after the last one
  // served; nullopt when every island waits on a reply or an evaluation.
  std::optional<StageRequest> NextRequest();

  // Replies to a request (by request id). Error only for misuse (unknown
  // request id, wrong stage); a reply that fails the stage's checks is a
  // kRetry or kGaveUp result, not an error.
  Result<ReplyResult> ObserveIdeas(uint64_t request_id, const IdeaGenerationReply& reply);
  Result<ReplyResult> ObserveClassification(uint64_t request_id, const ClassificationReply& reply);
  Result<ReplyResult> ObserveSelection(uint64_t request_id, const SelectionReply& reply);
  Result<ReplyResult> ObserveSummary(uint64_t request_id, const SummaryReply& reply);
  Result<ReplyResult> ObservePruning(uint64_t request_id, const PruningReply& reply);
  // The implementation request produced a candidate that went to evaluation.
  // Candidate ids must be unique in the run.
  Status ObserveSubmitted(uint64_t request_id, std::string candidate_id);
  // The request's LLM call failed, its reply did not validate, or no code
  // could be extracted: retried like a rejected reply.
  Result<ReplyResult> ObserveStageFailure(uint64_t request_id, std::string reason);
  // The evaluation of a submitted candidate finished.
  Status ObserveEvaluation(std::string_view candidate_id, const EvaluationOutcome& outcome);

  std::vector<SearchEvent> DrainEvents();

  // Sets r while no evaluation has been observed (the optimize loop learns the
  // task's speed-of-light floor from the first evaluation); every island's
  // momentum starts afresh with it. kBadInput afterwards or for r < 0.
  Status SetTarget(double target_ms);

  int num_islands() const { return static_cast<int>(islands_.size()); }
  const IslandState& island(int i) const { return islands_.at(i); }
  const FailureLog& failure_log() const { return failures_; }
  const PacEvolveOptions& options() const { return options_; }
  double baseline_ms() const { return baseline_ms_; }
  double target_ms() const { return target_ms_; }
  int64_t evaluations() const { return evaluations_; }
  // The best accepted candidate of the whole run; nullopt before the first.
  std::optional<ProgramRef> BestProgram() const;
  // (island, candidate id) of every candidate being evaluated; after a resume
  // the loop re-attaches these to their evaluation jobs.
  std::vector<std::pair<int, std::string>> PendingEvaluations() const;

  // Everything, for persistence and resume. Requests in flight are not kept:
  // after FromJson their islands ask the same stage again. Evaluations in
  // flight are kept (PendingEvaluations).
  nlohmann::json ToJson() const;
  static Result<PacEvolveSearch> FromJson(const nlohmann::json& j);

 private:
  struct CandidateRecord {
    std::string source;
    double runtime_ms = 0.0;
    int island = 0;
    int64_t iteration = 0;
  };

  PacEvolveSearch(const PacEvolveOptions& options, double baseline_ms, double target_ms,
                  uint64_t seed);

  Result<IslandState*> IslandForRequest(uint64_t request_id, StageKind expected);
  StageRequest BuildRequest(IslandState& is);
  ProgramRef ProgramOf(const std::string& candidate_id) const;
  std::vector<ExemplarView> SampleExemplars(const IslandState& is);
  void Emit(std::string type, int island, nlohmann::json detail);
  ReplyResult Reject(IslandState& is, std::string reason);
  void GiveUp(IslandState& is, StageKind stage);
  void StartIteration(IslandState& is);
  void AdvanceClassification(IslandState& is);
  void AfterRecord(IslandState& is);
  void AfterSummary(IslandState& is);
  void FinishIteration(IslandState& is);
  void Intervene(IslandState& is, std::string_view trigger);
  void Backtrack(IslandState& is, nlohmann::json detail);
  void Crossover(IslandState& is, int partner, nlohmann::json detail);
  void PruneIdeas(IslandState& is, const std::vector<int>& ids, const std::string& rationale,
                  bool fallback);
  IslandSnapshot Snapshot(const IslandState& is) const;

  PacEvolveOptions options_;
  double baseline_ms_;
  double target_ms_;
  Rng rng_;
  BucketSampler sampler_;
  FailureLog failures_;
  std::vector<IslandState> islands_;
  std::map<std::string, CandidateRecord> candidates_;  // accepted candidates
  std::set<std::string> submitted_ids_;                // every candidate ever submitted
  std::vector<SearchEvent> events_;
  uint64_t next_request_id_ = 1;
  int64_t evaluations_ = 0;
  int cursor_ = 0;
  std::string best_candidate_id_;
  double best_runtime_ms_ = 0.0;
};

}  // namespace kforge::search::pacevolve
