// SYNTHETIC. The strategies under comparison, each driving the synthetic LLM
// of synthetic_llm.h over the landscape of landscape.h. The PACEvolve runs go
// through the real kforge_search_core state machine (PacEvolveSearch), and the
// contrastive run through the real ExemplarStore and BucketSampler; only the
// LLM and the GPU are simulated.
#pragma once

#include <cstdint>
#include <limits>
#include <string>

#include "landscape.h"
#include "search/contrastive/contrastive_config.h"
#include "search/pacevolve/search_config.h"

namespace kforge::bench {

struct Budget {
  int64_t evaluations = std::numeric_limits<int64_t>::max();
  int64_t llm_calls = std::numeric_limits<int64_t>::max();
};

struct RunResult {
  double best_true_ms = 0.0;      // noise-free runtime of the best measured candidate
  double best_measured_ms = 0.0;  // what the search believed
  int64_t evaluations = 0;
  int64_t llm_calls = 0;
  int backtracks = 0;
  int crossovers = 0;
};

// Greedy hill climbing: edit the best program, keep the edit when it is faster;
// the prompt shows the last 10 attempts.
RunResult RunGreedy(const Landscape& land, uint64_t seed, const Budget& budget);
// Best-of-n: independent one-shot programs from the reference.
RunResult RunBestOfN(const Landscape& land, uint64_t seed, const Budget& budget);
// CUDA-L1's single-stage contrastive loop: N bucket-sampled scored exemplars,
// edit the best of them.
RunResult RunContrastive(const Landscape& land, uint64_t seed, const Budget& budget,
                         const search::ContrastiveOptions& options);
// PACEvolve through PacEvolveSearch (every LLM stage answered synthetically).
// Returns an error text instead of a result if the library reports misuse.
RunResult RunPacEvolve(const Landscape& land, uint64_t seed, const Budget& budget,
                       const search::pacevolve::PacEvolveOptions& options, std::string* error);

}  // namespace kforge::bench
