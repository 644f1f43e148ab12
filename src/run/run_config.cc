#include "run/run_config.h"

#include <fmt/format.h>

namespace kforge::run {

namespace {
constexpr int64_t kMaxInFlightCap = 64;
}

void RegisterRunConfig(ConfigSchema& s) {
  LoopOptions d;
  s.Add({"run.max_in_flight", int64_t{d.max_in_flight},
         "LLM proposals in flight at once (proposing overlaps evaluating)"});
  s.Add({"run.max_unusable_proposals", int64_t{d.max_unusable_proposals},
         "stop after this many proposals in a row gave no new candidate (failed call, no code "
         "block, duplicate)"});
  s.Add({"run.max_calls_per_candidate", int64_t{d.max_calls_per_candidate},
         "stop after this many LLM calls (any stage) in a row produced no new candidate"});
  s.Add({"run.workers", int64_t{0},
         "evaluation workers on cuda, one GPU each (0: one per visible GPU; --gpu picks one)"});
  s.Add({"run.status_interval_ms", d.status_interval_ms,
         "how often the live status line is refreshed on a terminal"});
}

Result<LoopOptions> LoopOptionsFromConfig(const Config& c) {
  LoopOptions o;
  int64_t in_flight = c.GetInt("run.max_in_flight");
  if (in_flight < 1 || in_flight > kMaxInFlightCap) {
    return Error::BadInput(
        fmt::format("config key 'run.max_in_flight' must be between 1 and {}", kMaxInFlightCap));
  }
  o.max_in_flight = static_cast<int>(in_flight);
  int64_t unusable = c.GetInt("run.max_unusable_proposals");
  if (unusable < 1) {
    return Error::BadInput("config key 'run.max_unusable_proposals' must be at least 1");
  }
  o.max_unusable_proposals = static_cast<int>(unusable);
  int64_t per_candidate = c.GetInt("run.max_calls_per_candidate");
  if (per_candidate < 1) {
    return Error::BadInput("config key 'run.max_calls_per_candidate' must be at least 1");
  }
  o.max_calls_per_candidate = static_cast<int>(per_candidate);
  o.status_interval_ms = c.GetInt("run.status_interval_ms");
  if (o.status_interval_ms < 1) {
    return Error::BadInput("config key 'run.status_interval_ms' must be positive");
  }
  if (c.GetInt("run.workers") < 0) {
    return Error::BadInput("config key 'run.workers' cannot be negative");
  }
  return o;
}

int64_t WorkersFromConfig(const Config& c) {
  return c.GetInt("run.workers");
}

}  // namespace kforge::run
