#include "search/pacevolve/crossover_policy.h"

#include <algorithm>
#include <cmath>

namespace kforge::search::pacevolve {

double ActionWeights::Total() const {
  double total = backtrack;
  for (double w : crossover) total += w;
  return total;
}

double ActionWeights::BacktrackProbability() const {
  const double total = Total();
  return total > 0.0 ? backtrack / total : 1.0;
}

double ActionWeights::CrossoverProbability(int j) const {
  const double total = Total();
  if (total <= 0.0 || j < 0 || j >= static_cast<int>(crossover.size())) return 0.0;
  return crossover[j] / total;
}

ActionWeights ComputeActionWeights(int island, const std::vector<double>& a) {
  ActionWeights w;
  w.island = island;
  w.a_i = a[island];
  w.crossover.assign(a.size(), 0.0);
  for (int j = 0; j < static_cast<int>(a.size()); ++j) {
    if (j == island) continue;
    if (w.best_partner < 0 || a[j] > a[w.best_partner]) w.best_partner = j;
  }
  if (w.best_partner < 0) {
    w.backtrack = 1.0;
    return w;
  }
  w.a_best = a[w.best_partner];
  w.similarity = std::max(0.0, 1.0 - std::fabs(w.a_i - w.a_best));
  w.backtrack = std::max(0.0, w.a_i - w.a_best) + w.similarity * (1.0 - w.a_i) * (1.0 - w.a_best);
  for (int j = 0; j < static_cast<int>(a.size()); ++j) {
    if (j == island) continue;
    w.crossover[j] = std::max(0.0, a[j] - w.a_i);
  }
  w.crossover[w.best_partner] += w.similarity * w.a_i * w.a_best;
  return w;
}

Intervention SampleIntervention(const ActionWeights& weights, Rng& rng) {
  Intervention out;
  const double total = weights.Total();
  if (!(total > 0.0)) {
    out.probability = 1.0;
    return out;
  }
  std::vector<double> all;
  all.reserve(weights.crossover.size() + 1);
  all.push_back(weights.backtrack);
  all.insert(all.end(), weights.crossover.begin(), weights.crossover.end());
  const size_t pick = rng.Categorical(all);
  if (pick == 0) {
    out.probability = weights.backtrack / total;
    return out;
  }
  out.kind = Intervention::Kind::kCrossover;
  out.partner = static_cast<int>(pick - 1);
  out.probability = weights.crossover[pick - 1] / total;
  return out;
}

}  // namespace kforge::search::pacevolve
