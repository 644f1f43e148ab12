// Momentum-based backtracking (PACEvolve Section 3.2, Algorithm 2, lines 1–12)
// and the distribution of the state a backtrack returns to.
//
// The score s is the runtime of the best accepted candidate (lower is
// better) and r the target it cannot beat (by default the task's
// speed-of-light floor):
//   G_t = s_t − r                                       performance gap
//   R_t = (s_{t−1} − s_t) / (s_{t−1} − r) if s_t < s_{t−1}, else 0
//   m_t = β·m_{t−1} + (1 − β)·R_t,  m_0 = 1              relative momentum
// An island is stagnant when m_t < ε_rel.
//
// Guards the paper leaves implicit (a measured floor can be wrong):
// R_t is clamped to [0, 1]; when s_{t−1} ≤ r already, any improvement counts
// as R_t = 1. A candidate that was not accepted has s = +∞ (no improvement).
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <vector>

#include "common/result.h"
#include "search/contrastive/rng.h"

namespace kforge::search::pacevolve {

// G_t = s_t − r.
double PerformanceGap(double score, double target);
// R_t as above, for the previous best s_{t−1} and the new best s_t.
double RelativeProgress(double previous_best, double current_best, double target);
// A = (s_0 − s_t) / (s_0 − r), the fraction of the initial gap closed
// (Section 3.3), clamped to [0, 1]; 0 when s_0 ≤ r (there was no gap).
double AbsoluteProgress(double initial_score, double current_best, double target);

class MomentumTracker {
 public:
  // beta: β in [0, 1); target: r; initial_score: s_0.
  MomentumTracker(double beta, double target, double initial_score);

  struct Step {
    double score = 0.0;              // s_curr, the evaluated candidate (+∞ if rejected)
    double best = 0.0;               // s_t = min(s_curr, s_{t−1})
    double gap = 0.0;                // G_t
    double relative_progress = 0.0;  // R_t
    double momentum = 0.0;           // m_t
    bool improved = false;           // s_t < s_{t−1}
  };
  // One generation: fold the evaluated candidate's runtime into the best and
  // the momentum.
  Step Observe(double score);
  // Starts a new trajectory at `best` with m = m_0 = 1 (after a backtrack or
  // a crossover, which put the island in a new state).
  void Restart(double best);

  bool Stagnant(double threshold) const { return momentum_ < threshold; }
  double momentum() const { return momentum_; }
  double best() const { return best_; }
  double beta() const { return beta_; }
  double target() const { return target_; }

  nlohmann::json ToJson() const;
  static Result<MomentumTracker> FromJson(const nlohmann::json& j);

 private:
  double beta_;
  double target_;
  double best_;
  double momentum_ = 1.0;
};

// Which earlier state a backtrack returns to. States are numbered k = 0 (the
// oldest, the island's initial state) … n−1 (the newest), and
//   P(k) = (k + 1)^(−α) / Σ_{i=1..n} i^(−α),
// a truncated power law (Zipf) that favours earlier states; α = 0 is uniform.
std::vector<double> BacktrackDistribution(size_t num_states, double alpha);
size_t SampleBacktrackState(size_t num_states, double alpha, Rng& rng);

}  // namespace kforge::search::pacevolve
