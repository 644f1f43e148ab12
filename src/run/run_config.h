// The optimize loop's config keys (run.*) and their values.
#pragma once

#include <cstdint>
#include <string>

#include "common/config.h"
#include "common/result.h"

namespace kforge::run {

struct LoopOptions {
  int64_t iterations = 0;  // N: candidates sent to evaluation, compile failures included
  int max_in_flight = 2;   // LLM proposals at once
  // Proposals in a row that gave no new candidate (failed call, no code
  // block, duplicate) before the run stops: a model that only repeats itself
  // must not spin forever.
  int max_unusable_proposals = 10;
  // LLM calls (of any stage) since the last new candidate before the run
  // stops: a multi-stage strategy (pacevolve) whose replies keep being sent
  // back must not spend the budget without ever evaluating anything.
  int max_calls_per_candidate = 60;
  int64_t status_interval_ms = 1000;  // live status refresh on a terminal
};

// The knowledge base in a run (kb.*; docs/knowledge-base.md, "In a run").
struct KbRunOptions {
  bool enabled = true;           // offer the knowledge base's techniques in code prompts
  int top_k = 3;                 // techniques drawn per prompt
  double temperature = 0.2;      // Select's temperature: lower is greedier
  bool textual_gradient = true;  // the three text stages after each evaluation
  // The gap analysis's `state_after` (a state the knowledge base knows, a
  // discovered one included) replaces the rules' state of a profiled candidate
  // when it becomes a parent: the LLM refinement of the classification.
  bool refine_states = true;
  // auto: Nsight Compute on cuda when `ncu` is found, none on cpu; ncu: required
  // (an error on cpu or without ncu); off: never (state "unknown").
  std::string profile = "auto";
  std::string ncu = "ncu";
  int64_t profile_timeout_s = 600;
};

void RegisterRunConfig(ConfigSchema& schema);
// The format a new run's candidates are recorded in (run.candidate_format on
// `device`): kernelbench on cuda, cpp on a cpu, or native (cuda only).
Result<std::string> CandidateFormatFromConfig(const Config& config, const std::string& device);
// kBadInput for out-of-range values. `iterations` is left 0 (a flag sets it).
Result<LoopOptions> LoopOptionsFromConfig(const Config& config);
// run.workers: evaluation workers on cuda (0: one per visible GPU).
int64_t WorkersFromConfig(const Config& config);
// kBadInput for out-of-range values or an unknown kb.profile.
Result<KbRunOptions> KbRunOptionsFromConfig(const Config& config);

}  // namespace kforge::run
