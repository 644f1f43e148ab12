// Self-adaptive collaborative evolution (PACEvolve Section 3.3, Appendix B.3,
// Algorithm 2 lines 13–30). When island i stagnates it picks one action from
// {Backtrack} ∪ {Crossover_j : j ≠ i} with probability proportional to:
//   A_best = max_{j≠i} A_j                (j_best: the first island reaching it)
//   S      = max(0, 1 − |A_i − A_best|)
//   w_BT   = max(0, A_i − A_best) + S·(1 − A_i)·(1 − A_best)
//   w_Cj   = max(0, A_j − A_i)            (+ S·A_i·A_best for j = j_best)
// where A_j = (s_0 − s_t)/(s_0 − r) is island j's absolute progress.
// Backtracking wins when i leads or when everyone is stuck low; crossover
// wins towards islands that are ahead, and between islands that are both far
// along (synergy).
#pragma once

#include <vector>

#include "search/contrastive/rng.h"

namespace kforge::search::pacevolve {

struct ActionWeights {
  int island = 0;                 // i
  double a_i = 0.0;               // A_i
  double a_best = 0.0;            // A_best (0 when there is no other island)
  int best_partner = -1;          // j_best, −1 when there is no other island
  double similarity = 0.0;        // S
  double backtrack = 0.0;         // w_BT
  std::vector<double> crossover;  // w_Cj indexed by island; 0 at index i

  double Total() const;
  double BacktrackProbability() const;
  double CrossoverProbability(int j) const;
};

// absolute_progress[j] = A_j for every island j, including i. With no other
// island the only action is backtracking (w_BT = 1).
ActionWeights ComputeActionWeights(int island, const std::vector<double>& absolute_progress);

struct Intervention {
  enum class Kind { kBacktrack, kCrossover };
  Kind kind = Kind::kBacktrack;
  int partner = -1;          // crossover partner j
  double probability = 0.0;  // P(a) of the sampled action
};

// Draws an action with probability w_a / Σ w. The weights never all vanish
// for A in [0, 1] (see docs/search.md); if they do anyway, backtracking.
Intervention SampleIntervention(const ActionWeights& weights, Rng& rng);

}  // namespace kforge::search::pacevolve
