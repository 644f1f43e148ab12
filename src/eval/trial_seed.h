// The seed of each correctness trial: shared by the evaluator and
// `kforge tasks scan`, so a scan sees exactly the inputs an evaluation does.
#pragma once

#include <cstdint>

namespace kforge {

inline uint64_t SplitMix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// Seed of trial k (k = -1: model construction): distinct per (run seed,
// trial), within torch's range.
inline int64_t TrialSeed(uint64_t seed, int k) {
  return static_cast<int64_t>(SplitMix64(seed * 1000003ULL + static_cast<uint64_t>(k) + 1) %
                              2147483647ULL);
}

}  // namespace kforge
