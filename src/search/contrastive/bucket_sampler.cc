#include "search/contrastive/bucket_sampler.h"

#include <algorithm>
#include <cmath>

namespace kforge::search {

std::vector<double> BucketSampler::Probabilities(const std::vector<ScoreBucket>& buckets) const {
  if (buckets.empty()) return {};
  double mu = 0.0;
  for (const ScoreBucket& b : buckets) mu += b.mean_score;
  mu /= static_cast<double>(buckets.size());

  std::vector<double> logits;
  logits.reserve(buckets.size());
  for (const ScoreBucket& b : buckets) logits.push_back((b.mean_score - mu) / temperature_);
  const double top = *std::max_element(logits.begin(), logits.end());

  std::vector<double> p;
  p.reserve(buckets.size());
  double sum = 0.0;
  for (double z : logits) {
    p.push_back(std::exp(z - top));
    sum += p.back();
  }
  for (double& x : p) x /= sum;
  return p;
}

std::vector<size_t> BucketSampler::Sample(const ExemplarStore& store, size_t n, Rng& rng) const {
  std::vector<ScoreBucket> remaining = store.Buckets();
  std::vector<size_t> picked;
  while (picked.size() < n && !remaining.empty()) {
    // Renormalising over the remaining buckets is the same as recomputing eq. 1
    // on them: μ only shifts the logits.
    const std::vector<double> p = Probabilities(remaining);
    const size_t b = rng.Categorical(p);
    const std::vector<size_t>& members = remaining[b].members;
    picked.push_back(members[rng.UniformIndex(members.size())]);
    remaining.erase(remaining.begin() + static_cast<std::ptrdiff_t>(b));
  }
  return picked;
}

}  // namespace kforge::search
