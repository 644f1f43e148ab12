// BucketSampler: CUDA-L1's contrastive exemplar selection (Section 2.4.3,
// eq. 1). N distinct score buckets are drawn with
//
//   P(B_k) = exp((s̄_k − μ)/τ) / Σ_j exp((s̄_j − μ)/τ),
//
// s̄_k the mean score of bucket k, μ the mean of all bucket means, τ the
// temperature; then one exemplar is drawn uniformly from each chosen bucket.
// Subtracting μ shifts every logit by the same amount, so it leaves the
// distribution unchanged; it keeps exp() in range, as the paper intends. We
// also subtract the largest centred logit before exp() for the same reason.
//
// "N distinct buckets" is realised as successive draws without replacement:
// each draw uses the softmax above restricted to the buckets not yet drawn.
#pragma once

#include <cstddef>
#include <vector>

#include "search/contrastive/exemplar_store.h"
#include "search/contrastive/rng.h"

namespace kforge::search {

class BucketSampler {
 public:
  explicit BucketSampler(double temperature) : temperature_(temperature) {}

  // Eq. 1 over the given buckets (in the same order). Empty input → empty.
  std::vector<double> Probabilities(const std::vector<ScoreBucket>& buckets) const;

  // Positions in store.entries() of min(n, #buckets) exemplars from distinct
  // buckets, in the order drawn.
  std::vector<size_t> Sample(const ExemplarStore& store, size_t n, Rng& rng) const;

  double temperature() const { return temperature_; }

 private:
  double temperature_;
};

}  // namespace kforge::search
