// ExemplarStore: the performance-indexed database of accepted candidates that
// CUDA-L1 (Section 2.4.3) draws its scored exemplars from. Candidates are
// grouped into buckets of equal score width Δs: bucket k holds the scores in
// [k·Δs, (k+1)·Δs). Scores are "higher is better": the speedup over the
// reference (CUDA-L1 eq. 2) by default, or the negated runtime.
#pragma once

#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"

namespace kforge::search {

enum class ScoreKind {
  kSpeedup,  // reference_ms / runtime_ms (dimensionless)
  kRuntime,  // −runtime_ms, so that a faster candidate still scores higher
};

std::string_view ScoreKindName(ScoreKind kind);
Result<ScoreKind> ParseScoreKind(std::string_view name);

struct Exemplar {
  std::string candidate_id;
  double runtime_ms = 0.0;
  double score = 0.0;
  int island = 0;
  int64_t iteration = 0;
};

struct ScoreBucket {
  int64_t index = 0;   // floor(score / Δs)
  double lower = 0.0;  // index · Δs
  double upper = 0.0;  // (index + 1) · Δs
  double mean_score = 0.0;
  std::vector<size_t> members;  // positions in ExemplarStore::entries()
};

class ExemplarStore {
 public:
  // reference_ms: runtime of the program speedups are measured against.
  // bucket_width: Δs, in score units. Both must be positive and finite.
  ExemplarStore(ScoreKind kind, double reference_ms, double bucket_width);

  // Adds an accepted candidate. Returns false (and stores nothing) when the
  // candidate is already stored or the runtime is not a positive finite number.
  bool Add(std::string candidate_id, double runtime_ms, int island, int64_t iteration);
  double ScoreOf(double runtime_ms) const;

  // Non-empty buckets in ascending score order.
  std::vector<ScoreBucket> Buckets() const;

  const std::vector<Exemplar>& entries() const { return entries_; }
  size_t size() const { return entries_.size(); }
  bool empty() const { return entries_.empty(); }
  // Keeps the n oldest entries; PACEvolve's backtrack rewinds an island's
  // store to the size it had at the restored state.
  void Truncate(size_t n);
  const Exemplar* Find(std::string_view candidate_id) const;
  const Exemplar* Best() const;  // highest score; nullptr when empty

  ScoreKind kind() const { return kind_; }
  double reference_ms() const { return reference_ms_; }
  double bucket_width() const { return bucket_width_; }

  nlohmann::json ToJson() const;
  static Result<ExemplarStore> FromJson(const nlohmann::json& j);

 private:
  ScoreKind kind_;
  double reference_ms_;
  double bucket_width_;
  std::vector<Exemplar> entries_;
};

}  // namespace kforge::search
