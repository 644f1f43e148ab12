#include "search/pacevolve/search_config.h"

#include <fmt/format.h>

#include <cmath>
#include <limits>

namespace kforge {

void RegisterSearchConfig(ConfigSchema& schema) {
  using search::pacevolve::PacEvolveOptions;
  const PacEvolveOptions d;
  auto add_int = [&](const char* key, int v, const char* doc) {
    schema.Add({key, int64_t{v}, doc});
  };
  add_int("pacevolve.islands", d.islands, "islands searched in parallel (paper's multi-island: 2)");
  schema.Add({"pacevolve.momentum_beta", d.momentum_beta,
              "beta: momentum decay, m_t = beta*m_{t-1} + (1-beta)*R_t (paper: no value; ours)"});
  schema.Add({"pacevolve.stagnation_threshold", d.stagnation_threshold,
              "epsilon_rel: an island is stagnant when m_t < epsilon_rel (paper: no value; ours)"});
  add_int("pacevolve.freeze_iterations", d.freeze_iterations,
          "evaluations on an island before its first, and between its, backtrack/crossover "
          "(reference impl: 15)");
  schema.Add({"pacevolve.backtrack_power", d.backtrack_power,
              "alpha: backtrack to state k (0 = oldest) with P(k) ~ (k+1)^-alpha "
              "(reference impl: 1.5)"});
  schema.Add({"pacevolve.target_ms", d.target_ms,
              "r: runtime target in ms for momentum and progress; negative = the task's "
              "speed-of-light floor"});
  add_int("pacevolve.max_ideas", d.max_ideas,
          "K_idea: prune the idea pool when it holds more ideas (reference impl: 5)");
  add_int("pacevolve.max_hypotheses", d.max_hypotheses,
          "K_hyp: summarise an idea's hypotheses when it holds more (reference impl: 20)");
  add_int("pacevolve.ideas_per_generation", d.ideas_per_generation,
          "ideas asked for per idea-generation call (paper prompt: 3)");
  add_int("pacevolve.idea_generation_interval", d.idea_generation_interval,
          "generate ideas every this many iterations (paper: every iteration, 1)");
  schema.Add({"pacevolve.failure_match_threshold", d.failure_match_threshold,
              "word-set Jaccard similarity at which an idea or experiment matches a logged "
              "failure (ours)"});
  add_int("pacevolve.crossover_ideas", d.crossover_ideas,
          "top ideas a crossover copies from the partner island (ours)");
  add_int("pacevolve.stage_retries", d.stage_retries,
          "retries of a structured stage whose reply fails its checks (reference impl: 3)");
  add_int("pacevolve.fruitless_limit", d.fruitless_limit,
          "iterations in a row without a candidate after which an island intervenes as if "
          "stagnant (needs mbb; 0 = never; ours)");
  schema.Add({"pacevolve.hcm", d.hcm,
              "ablation: hierarchical context management (idea pool, summaries, pruning, failure "
              "log); off = one code stage with an append-only history"});
  schema.Add({"pacevolve.mbb", d.mbb,
              "ablation: momentum-based backtracking; off = islands never intervene (no "
              "backtrack, no crossover)"});
  schema.Add({"pacevolve.ce", d.ce,
              "ablation: collaborative evolution; off = a stagnant island always backtracks"});
  search::RegisterContrastiveConfig(schema);
}

}  // namespace kforge

namespace kforge::search::pacevolve {
namespace {

Status Bad(const char* key, const std::string& what) {
  return Error::BadInput(fmt::format("{} {}", key, what));
}

}  // namespace

Status ValidatePacEvolveOptions(const PacEvolveOptions& o) {
  if (o.islands < 1) return Bad("pacevolve.islands", "must be at least 1");
  if (!(o.momentum_beta >= 0.0 && o.momentum_beta < 1.0)) {
    return Bad("pacevolve.momentum_beta",
               fmt::format("must be in [0, 1), got {}", o.momentum_beta));
  }
  if (!std::isfinite(o.stagnation_threshold) || o.stagnation_threshold < 0.0) {
    return Bad("pacevolve.stagnation_threshold", "must be a non-negative number");
  }
  if (o.freeze_iterations < 0) return Bad("pacevolve.freeze_iterations", "must be non-negative");
  if (!std::isfinite(o.backtrack_power) || o.backtrack_power < 0.0) {
    return Bad("pacevolve.backtrack_power", "must be a non-negative number");
  }
  if (!std::isfinite(o.target_ms)) return Bad("pacevolve.target_ms", "must be a number");
  if (o.max_ideas < 1) return Bad("pacevolve.max_ideas", "must be at least 1");
  if (o.max_hypotheses < 1) return Bad("pacevolve.max_hypotheses", "must be at least 1");
  if (o.ideas_per_generation < 1)
    return Bad("pacevolve.ideas_per_generation", "must be at least 1");
  if (o.idea_generation_interval < 1) {
    return Bad("pacevolve.idea_generation_interval", "must be at least 1");
  }
  if (!(o.failure_match_threshold > 0.0 && o.failure_match_threshold <= 1.0)) {
    return Bad("pacevolve.failure_match_threshold", "must be in (0, 1]");
  }
  if (o.crossover_ideas < 0) return Bad("pacevolve.crossover_ideas", "must be non-negative");
  if (o.stage_retries < 0) return Bad("pacevolve.stage_retries", "must be non-negative");
  if (o.fruitless_limit < 0) return Bad("pacevolve.fruitless_limit", "must be non-negative");
  return search::ValidateContrastiveOptions(o.contrastive);
}

Result<PacEvolveOptions> PacEvolveOptionsFromConfig(const Config& config) {
  PacEvolveOptions o;
  constexpr int64_t kMax = std::numeric_limits<int>::max();
  struct IntKey {
    const char* key;
    int* field;
    int64_t min;
  };
  const IntKey ints[] = {
      {"pacevolve.islands", &o.islands, 1},
      {"pacevolve.freeze_iterations", &o.freeze_iterations, 0},
      {"pacevolve.max_ideas", &o.max_ideas, 1},
      {"pacevolve.max_hypotheses", &o.max_hypotheses, 1},
      {"pacevolve.ideas_per_generation", &o.ideas_per_generation, 1},
      {"pacevolve.idea_generation_interval", &o.idea_generation_interval, 1},
      {"pacevolve.crossover_ideas", &o.crossover_ideas, 0},
      {"pacevolve.stage_retries", &o.stage_retries, 0},
      {"pacevolve.fruitless_limit", &o.fruitless_limit, 0},
  };
  for (const IntKey& k : ints) {
    Result<int> v = config.GetIntInRange(k.key, k.min, kMax);
    if (!v.ok()) return v.error();
    *k.field = *v;
  }
  o.momentum_beta = config.GetDouble("pacevolve.momentum_beta");
  o.stagnation_threshold = config.GetDouble("pacevolve.stagnation_threshold");
  o.backtrack_power = config.GetDouble("pacevolve.backtrack_power");
  o.target_ms = config.GetDouble("pacevolve.target_ms");
  o.failure_match_threshold = config.GetDouble("pacevolve.failure_match_threshold");
  o.hcm = config.GetBool("pacevolve.hcm");
  o.mbb = config.GetBool("pacevolve.mbb");
  o.ce = config.GetBool("pacevolve.ce");
  Result<search::ContrastiveOptions> contrastive = search::ContrastiveOptionsFromConfig(config);
  if (!contrastive.ok()) return contrastive.error();
  o.contrastive = *contrastive;
  if (Status s = ValidatePacEvolveOptions(o); !s.ok()) return s.error();
  return o;
}

double ResolveTarget(const PacEvolveOptions& options, std::optional<double> sol_floor_ms) {
  if (options.target_ms >= 0.0) return options.target_ms;
  if (sol_floor_ms && std::isfinite(*sol_floor_ms) && *sol_floor_ms >= 0.0) return *sol_floor_ms;
  return 0.0;
}

}  // namespace kforge::search::pacevolve
