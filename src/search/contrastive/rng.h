// Rng: the one source of randomness in the search algorithms. Seeded and
// reproducible on every platform: std::mt19937_64 is specified bit for bit by
// the standard, and the transforms below are ours (the std::*_distribution
// classes give different draws on different standard libraries).
#pragma once

#include <cstddef>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "common/result.h"

namespace kforge::search {

class Rng {
 public:
  explicit Rng(uint64_t seed = 0) : engine_(seed) {}

  uint64_t NextU64() { return engine_(); }
  // Uniform in [0, 1) with 53 random bits.
  double Uniform();
  // Uniform in {0, …, n−1} without modulo bias; n must be positive.
  size_t UniformIndex(size_t n);
  // Index i with probability weights[i] / Σ weights. Weights must be finite and
  // non-negative with a positive sum (checked by the callers, who own the
  // meaning of an all-zero vector).
  size_t Categorical(const std::vector<double>& weights);

  // The engine state as text, for persistence and resume.
  std::string SaveState() const;
  Status RestoreState(const std::string& state);

 private:
  std::mt19937_64 engine_;
};

}  // namespace kforge::search
