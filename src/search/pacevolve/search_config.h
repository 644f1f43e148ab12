// Every knob of the PACEvolve search (pacevolve.*) and, through
// RegisterSearchConfig, of the contrastive exemplars (contrastive.*).
// Defaults: the PACEvolve paper publishes no values for its hyper-parameters;
// where its reference implementation (github.com/google/pacevolve,
// workflows/run_experiment.py) has a default we take it, and the rest are ours
// (docs/search.md explains each choice).
#pragma once

#include <optional>

#include "common/config.h"
#include "common/result.h"
#include "search/contrastive/contrastive_config.h"

namespace kforge {

// Declares pacevolve.* and contrastive.* keys.
void RegisterSearchConfig(ConfigSchema& schema);

}  // namespace kforge

namespace kforge::search::pacevolve {

struct PacEvolveOptions {
  int islands = 2;  // the paper's multi-island runs use two islands
  // MBB
  double momentum_beta = 0.9;          // β (ours: the usual EWMA/Adam β1)
  double stagnation_threshold = 0.05;  // ε_rel (ours)
  int freeze_iterations = 15;          // reference implementation's freeze_period
  double backtrack_power = 1.5;        // α of the backtrack power law (reference: power_alpha)
  double target_ms = -1.0;             // r; negative: the task's speed-of-light floor
  // HCM
  int max_ideas = 5;                     // K_idea (reference: idea_cap)
  int max_hypotheses = 20;               // K_hyp (reference: summarize_freq)
  int ideas_per_generation = 3;          // the paper's idea prompt asks for 3 options
  int idea_generation_interval = 1;      // Algorithm 1 generates ideas every iteration
  double failure_match_threshold = 0.9;  // word-set Jaccard at which a text is a known failure
  // CE
  int crossover_ideas = 2;  // top ideas a crossover copies from the partner
  // LLM replies that fail the stage's checks are retried this many times.
  int stage_retries = 3;  // reference: max_attempt
  // Iterations in a row that end without a candidate (selection or code
  // retries exhausted, e.g. every proposal is a known failure) after which an
  // island counts as stuck and intervenes as if stagnant, freeze or not
  // (needs MBB; 0 = never). Ours: the paper has no such case.
  int fruitless_limit = 3;
  // Ablation switches.
  bool hcm = true;
  bool mbb = true;
  bool ce = true;

  search::ContrastiveOptions contrastive;
};

Status ValidatePacEvolveOptions(const PacEvolveOptions& options);
// Reads pacevolve.* and contrastive.* from a config whose schema includes
// RegisterSearchConfig; out-of-range values are kBadInput.
Result<PacEvolveOptions> PacEvolveOptionsFromConfig(const Config& config);

// r for a task: options.target_ms when it is set (≥ 0), else the task's
// speed-of-light floor, else 0 (a runtime cannot be negative).
double ResolveTarget(const PacEvolveOptions& options, std::optional<double> sol_floor_ms);

}  // namespace kforge::search::pacevolve
