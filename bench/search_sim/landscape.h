// SYNTHETIC. A made-up kernel-optimisation landscape for comparing search
// strategies without a GPU or an LLM. Nothing here is measured.
//
// A "program" is a level (0 = not applied) for each of ten techniques. Its
// runtime is baseline · exp(−Σ gains), where the gains follow a known table
// with one deliberate trap: the shared-memory family (tiling, register
// blocking) gives quick, large wins, but it conflicts with the tensor-core
// family, whose first level is a loss and whose full gain is much larger.
// A greedy climber that takes the shared-memory path ends in a local optimum
// (≈4.2×); the global optimum (≈6.6×) needs the tensor-core path from a
// program without shared-memory tiling.
#pragma once

#include <array>
#include <string>
#include <vector>

#include "search/contrastive/rng.h"

namespace kforge::bench {

inline constexpr int kTechniques = 10;

enum class Family { kCommon, kSharedMemory, kTensorCore };

struct Technique {
  std::string name;
  std::vector<double> gain;  // log-runtime reduction by level; gain[0] = 0
  Family family;
  double popularity;  // how readily the synthetic LLM thinks of it
  double fail_rate;   // chance that an edit of it fails to compile or verify
};

using Program = std::array<int, kTechniques>;

class Landscape {
 public:
  Landscape();

  const std::vector<Technique>& techniques() const { return techniques_; }
  int Levels(int t) const { return static_cast<int>(techniques_[t].gain.size()); }

  double baseline_ms() const { return 1.0; }
  // The speed-of-light floor handed to the search as r: 10× the baseline.
  double floor_ms() const { return floor_ms_; }
  double TrueRuntime(const Program& p) const;
  // One timing with 2 % log-normal noise.
  double Measure(const Program& p, search::Rng& rng) const;
  // Exhaustive search over all programs (computed once).
  double OptimumRuntime() const { return optimum_ms_; }
  // Best runtime among programs without any tensor-core technique: the trap.
  double TrapRuntime() const { return trap_ms_; }

  std::string Signature(const Program& p) const;     // "smem_tiling=2 fusion=1"
  int FindTechnique(const std::string& name) const;  // −1 when unknown

 private:
  std::vector<Technique> techniques_;
  double floor_ms_;
  double optimum_ms_;
  double trap_ms_;
};

// A standard normal draw (Box–Muller on Rng::Uniform).
double Gaussian(search::Rng& rng);

}  // namespace kforge::bench
