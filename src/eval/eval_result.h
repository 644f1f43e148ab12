// EvalResult: everything one evaluation established, as C++ types; ToJson
// renders exactly the `kforge eval --json` object of CONTRACT.md.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "eval/integrity.h"
#include "eval/sample_stats.h"

namespace kforge {

struct TimingSummary {
  SampleSummary stats;
  double overhead_ms = 0;    // the handshake (and flushes) subtracted from each sample
  int calls_per_sample = 1;  // each sample's time is divided by this
  std::optional<double> event_median_ms;
  bool cached = false;  // came from the baseline cache, not this window
};

struct EvalResult {
  std::string kforge_version;
  // task
  std::string task_name, task_path, task_sha256;
  bool degenerate = false;
  std::optional<std::string> degenerate_reason;
  std::optional<std::string> degenerate_kind;  // JudgeDegeneracy's stable id
  // candidate
  std::string candidate_path, candidate_format, candidate_sha256;
  // device
  std::string device_kind, device_name;
  int device_index = 0;
  std::string torch_version;
  Policy policy = Policy::kStrict;

  bool compiled = false;
  double compile_seconds = 0;
  bool compile_cached = false;
  std::string compile_log;
  // Native candidates: ptxas's report per kernel (KernelResources::ToJson).
  nlohmann::json compile_resources = nlohmann::json::array();

  bool correct = false;
  int trials = 0;
  double max_abs_err = 0, max_rel_err = 0, normwise_rel_err = 0;
  std::optional<std::string> correctness_detail;

  std::optional<TimingSummary> candidate_ms, eager_ms, compile_ms;
  std::optional<double> speedup_eager, speedup_compile;
  std::optional<double> sol_floor_ms, sol_fraction;
  nlohmann::json sol_detail;  // bytes, flops, ceilings

  std::vector<IntegrityFlag> flags;
  bool accepted = false;
  int milestone = -1;
  std::optional<std::string> error;
  nlohmann::json extra;  // sandbox notes, per-trial stats

  Verdict verdict() const { return CombineVerdict(flags); }
  nlohmann::json ToJson() const;
  // A readable multi-line summary for humans.
  std::string ToText() const;
};

// A speedup counts toward a milestone when it exceeds this (5% over the
// baseline, so that noise alone does not earn the reward).
inline constexpr double kMilestoneMargin = 1.05;

// CUDA Agent's milestone reward: −1 not accepted; 3 faster than both eager
// and compile by more than 5%; 2 faster than eager by more than 5%; else 1.
int MilestoneReward(bool accepted, std::optional<double> speedup_eager,
                    std::optional<double> speedup_compile);

}  // namespace kforge
