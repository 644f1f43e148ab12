// IdeaPool: one island's hierarchical idea memory (PACEvolve Section 3.1,
// Algorithm 1). Macro-level ideas ("fuse the epilogue into the GEMM") each
// hold micro-level hypotheses, the concrete experiments run under them with
// their measured results. Two caps keep the context small:
//  - K_hyp: when an idea holds more than K_hyp hypotheses, the LLM condenses
//    them into key findings (NeedsSummary / ApplySummary);
//  - K_idea: when the pool holds more than K_idea ideas, the LLM drops the
//    least promising ones (NeedsPrune / Remove).
// The pool only applies decisions; the LLM makes them (pacevolve_search.h).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"

namespace kforge::search::pacevolve {

struct Hypothesis {
  std::string description;           // the experiment that was run
  std::string candidate_id;          // empty when no candidate was evaluated
  bool accepted = false;             // compiled, correct, not rejected by integrity checks
  std::optional<double> runtime_ms;  // of the candidate, when accepted
  std::string outcome;               // short result text ("1.21 ms", "compile error: …")
  int64_t iteration = 0;             // evaluations recorded in the run when it was stored

  nlohmann::json ToJson() const;
  static Result<Hypothesis> FromJson(const nlohmann::json& j);
};

struct Idea {
  int id = 0;
  std::string description;
  std::string reasoning;               // why the LLM proposed it
  std::vector<Hypothesis> hypotheses;  // recorded since the last summary
  std::string key_findings;            // the latest summary of older hypotheses
  int summarized_hypotheses = 0;       // how many hypotheses the summaries cover
  // Best accepted result over every hypothesis ever recorded, summarised or not.
  std::optional<double> best_runtime_ms;
  std::string best_candidate_id;
  int origin_island = -1;  // island it came from through crossover; −1 if born here

  int TotalHypotheses() const {
    return summarized_hypotheses + static_cast<int>(hypotheses.size());
  }
  nlohmann::json ToJson() const;
  static Result<Idea> FromJson(const nlohmann::json& j);
};

class IdeaPool {
 public:
  IdeaPool(int max_ideas, int max_hypotheses)
      : max_ideas_(max_ideas), max_hypotheses_(max_hypotheses) {}

  // Adds a new idea and returns its id. Ids are never reused within a pool's
  // lifetime, across backtracks included (RestoreFrom keeps the counter).
  int Add(std::string description, std::string reasoning);
  // Refines an existing idea's description (classification found a match).
  Status Merge(int id, std::string updated_description);
  // Stores an evaluated experiment under its idea.
  Status Record(int id, Hypothesis hypothesis);

  // K_hyp trigger: more than max_hypotheses() hypotheses since the last summary.
  bool NeedsSummary(int id) const;
  // Folds every current hypothesis into `key_findings` (which replaces the
  // previous findings: the summarising LLM sees them and carries them over).
  Status ApplySummary(int id, std::string key_findings);

  // K_idea trigger: more than max_ideas() ideas.
  bool NeedsPrune() const { return static_cast<int>(ideas_.size()) > max_ideas_; }
  // Removes the given ideas and returns them. Every id must exist and appear
  // once; otherwise nothing is removed and the error says which id is wrong.
  Result<std::vector<Idea>> Remove(const std::vector<int>& ids);

  // Copies an idea from another island's pool under a fresh id.
  int Import(const Idea& idea, int origin_island);

  // Ids ranked best first: ideas with an accepted result by best runtime, then
  // the rest, older first. Ties keep the older idea first.
  std::vector<int> RankedIds() const;

  const Idea* Find(int id) const;
  bool Contains(int id) const { return Find(id) != nullptr; }
  // The first idea whose description normalises to the same words.
  const Idea* FindByDescription(std::string_view description) const;
  const std::vector<Idea>& ideas() const { return ideas_; }
  size_t size() const { return ideas_.size(); }
  bool empty() const { return ideas_.empty(); }
  int max_ideas() const { return max_ideas_; }
  int max_hypotheses() const { return max_hypotheses_; }
  int next_id() const { return next_id_; }

  // Replaces the contents with `snapshot` but keeps this pool's id counter
  // (or the snapshot's, if larger), so that ids stay unique over the run.
  void RestoreFrom(const IdeaPool& snapshot);

  nlohmann::json ToJson() const;
  static Result<IdeaPool> FromJson(const nlohmann::json& j);

 private:
  Idea* FindMutable(int id);

  int max_ideas_;
  int max_hypotheses_;
  int next_id_ = 1;
  std::vector<Idea> ideas_;
};

// Sentences in a description, for the "at most two sentences" rule of merged
// descriptions: a sentence ends at '.', '!' or '?' followed by the end of the
// text or by blanks and an upper-case letter ("e.g. the" and "e.g. 64-wide" do
// not end one). Text after the last terminator counts as one more sentence.
int CountSentences(std::string_view text);

}  // namespace kforge::search::pacevolve
