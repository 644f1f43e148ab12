// FailureLog: PACEvolve's permanent memory of known failures (Section 3.1,
// "Persisting Failures to Permanent Memory"; the global log L of Algorithm 1).
// It keeps every pruned idea and every rejected hypothesis for the whole run:
// backtracking never rewinds it, so a direction dropped on one branch is not
// re-explored on another. New ideas and experiments are checked against it.
//
// Matching is textual: two texts match when their normalised forms are equal
// or when the Jaccard similarity of their word sets reaches the threshold.
// Normalising lower-cases and keeps runs of letters and digits as words, so
// "Use 128x128 tiles." and "use 128x128 tiles" are the same text, while
// "128x128 tiles" and "128x64 tiles" differ. The log is also handed to the
// prompts so that the LLM can judge looser matches itself, as in the paper.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"

namespace kforge::search::pacevolve {

enum class FailureKind {
  kPrunedIdea,          // an idea dropped from a pool by pruning
  kRejectedHypothesis,  // an experiment whose candidate was not accepted or not faster
};

std::string_view FailureKindName(FailureKind kind);

struct FailureEntry {
  FailureKind kind = FailureKind::kRejectedHypothesis;
  std::string text;  // idea description or experiment description
  int island = 0;
  int idea_id = -1;
  int64_t iteration = 0;  // evaluations recorded in the run when it was logged
  std::optional<double> runtime_ms;
  std::string reason;

  nlohmann::json ToJson() const;
  static Result<FailureEntry> FromJson(const nlohmann::json& j);
};

class FailureLog {
 public:
  // threshold: Jaccard similarity in (0, 1] at which two texts match.
  explicit FailureLog(double match_threshold = 0.9) : threshold_(match_threshold) {}

  void Add(FailureEntry entry);
  // The oldest entry of that kind matching `text`; nullptr when none does.
  // Empty texts never match.
  const FailureEntry* FindMatch(FailureKind kind, std::string_view text) const;

  const std::vector<FailureEntry>& entries() const { return entries_; }
  size_t size() const { return entries_.size(); }
  double match_threshold() const { return threshold_; }

  // Word-set Jaccard similarity after normalisation (1.0 for equal texts).
  static double Similarity(std::string_view a, std::string_view b);
  static std::vector<std::string> NormalizedWords(std::string_view text);

  nlohmann::json ToJson() const;
  static Result<FailureLog> FromJson(const nlohmann::json& j, double match_threshold);

 private:
  double threshold_;
  std::vector<FailureEntry> entries_;
};

}  // namespace kforge::search::pacevolve
