// Config keys of the contrastive exemplar sampler (contrastive.*).
#pragma once

#include "common/config.h"
#include "common/result.h"
#include "search/contrastive/exemplar_store.h"

namespace kforge::search {

struct ContrastiveOptions {
  // N: exemplars per prompt. CUDA-L1 uses N = 2 (Section 2.4.3).
  int exemplars = 2;
  // τ, in score units. CUDA-L1 does not publish its value. With 0.5, a bucket
  // whose mean speedup is 0.5 higher is e (≈2.7) times likelier: fast buckets
  // are favoured while slower ones stay in play for contrast.
  double temperature = 0.5;
  // Δs, in score units. CUDA-L1 does not publish it; 0.1 separates speedups
  // that differ by 10 % of the reference time.
  double bucket_width = 0.1;
  ScoreKind score = ScoreKind::kSpeedup;
};

void RegisterContrastiveConfig(ConfigSchema& schema);
Status ValidateContrastiveOptions(const ContrastiveOptions& options);
// Reads contrastive.* from a config whose schema includes
// RegisterContrastiveConfig; out-of-range values are kBadInput.
Result<ContrastiveOptions> ContrastiveOptionsFromConfig(const Config& config);

}  // namespace kforge::search
