// The persistent knowledge base (KernelBlaster §3, Algorithm 2): per GPU
// architecture, each performance state maps to optimizations with their
// statistics and a predicted gain. The numeric update and the weighted-random
// top-k selection live here; the textual-gradient rewrite of an entry's notes
// comes from the LLM stages that use this class.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "common/result.h"

namespace kforge::kb {

struct Optimization {
  std::string technique;    // short id, e.g. "shared_memory_tiling"
  std::string description;  // what to do, for the prompt
  std::string notes;        // what was learned (rewritten by ParameterUpdate)
  int64_t attempts = 0;
  int64_t successes = 0;       // accepted and faster than its parent
  double sum_log_speedup = 0;  // over attempts; a failed attempt adds kFailedLogSpeedup
  double prior_log_gain = 0;   // log of the gain believed before any attempt

  double MeanLogSpeedup() const;
  // exp of the attempts' mean log-speedup shrunk towards the prior, which
  // counts as kPriorWeight attempts: one lucky result does not make a favourite.
  double PredictedGain() const;
};

struct PerformanceStateEntry {
  std::string name;
  std::string description;  // its primary and secondary bottlenecks, in words
  std::string signature;    // how a profile is recognised as this state
  std::vector<Optimization> optimizations;
};

// One evaluated application of an optimization in a state.
struct Outcome {
  bool accepted = false;
  double speedup = 1.0;  // over the candidate it was applied to
};

struct SelectionOptions {
  size_t k = 3;
  // Weights are exp(log(predicted gain) / temperature): lower is greedier.
  double temperature = 0.2;
};

class KnowledgeBase {
 public:
  static constexpr double kPriorWeight = 2.0;
  static constexpr double kFailedLogSpeedup = -0.05;  // a failure costs a little
  static constexpr double kSuccessSpeedup = 1.01;     // below this, no real gain

  explicit KnowledgeBase(std::string arch = "") : arch_(std::move(arch)) {}

  const std::string& arch() const { return arch_; }
  const std::map<std::string, PerformanceStateEntry>& states() const { return states_; }

  // Adds a state (a discovered one too); an existing state keeps its entries.
  PerformanceStateEntry& AddState(const std::string& name, const std::string& description = "");
  // Adds an optimization to a state unless one with the technique is there.
  Optimization& AddOptimization(const std::string& state, const Optimization& opt);
  const Optimization* Find(const std::string& state, const std::string& technique) const;

  // The numeric update after an evaluation. Unknown states and techniques are
  // added (a technique the model proposed becomes an entry).
  const Optimization& Record(const std::string& state, const std::string& technique,
                             const Outcome& outcome);
  // The textual update: ParameterUpdate's rewrite of an entry's notes.
  Status RewriteNotes(const std::string& state, const std::string& technique,
                      const std::string& notes);
  // ParameterUpdate may also sharpen what the entry tells the model to do.
  Status RewriteDescription(const std::string& state, const std::string& technique,
                            const std::string& description);

  // Weighted-random choice of up to k distinct techniques of a state, without
  // replacement (Efraimidis–Spirakis keys), so the best is likely, not certain.
  std::vector<const Optimization*> Select(const std::string& state, const SelectionOptions& o,
                                          std::mt19937_64& rng) const;

  // Adds another base's statistics into this one (same technique in the same
  // state: counts and sums add; text is kept unless ours is empty).
  void Merge(const KnowledgeBase& other);

  nlohmann::json ToJson() const;
  // `kforge kb show --json` (CONTRACT.md): {"states": [{"id", "name",
  // "description", "signature"}], "optimizations": [{"id", "state", ...}]}.
  nlohmann::json ToContractJson() const;
  static Result<KnowledgeBase> FromJson(const nlohmann::json& j);

 private:
  // The text updates: one field of an existing entry, or kNotFound.
  Status RewriteText(const std::string& state, const std::string& technique,
                     std::string Optimization::*field, const std::string& text);

  std::string arch_;
  std::map<std::string, PerformanceStateEntry> states_;
};

}  // namespace kforge::kb
