// Starting and resuming runs: everything between the CLI's flags and the
// optimize loop. A new run is validated completely (task, model spec and
// key, strategy, prompt templates, device) before anything is written, so
// bad input leaves no half-made run behind. A resumed run takes everything
// from its record: task (the recorded source if the file changed), model
// spec, strategy, device, GPUs, hardware text and config (secrets excepted:
// those come from the environment or config again), with optional
// overrides such as a larger budget.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "common/config.h"
#include "common/result.h"
#include "run/device_probe.h"
#include "run/optimize_loop.h"
#include "run/progress.h"
#include "run/stop_request.h"
#include "store/store.h"

namespace kforge::run {

struct OptimizeRequest {
  std::string task_path;
  std::string llm_spec;  // empty: config llm.spec
  std::string strategy = "greedy";
  int64_t iterations = 0;
  int islands = 0;              // 0: the strategy's default
  std::string device = "auto";  // auto | cuda | cpu
  int gpu = -1;                 // -1: one worker per visible GPU (or run.workers)
  std::string policy = "strict";
  uint64_t seed = 0;
  Config config;  // every module's keys registered; budget flags already applied
  // Called once the run is recorded, before its first evaluation, so that a
  // caller (a bench) can note the run's id before anything can go wrong.
  std::function<void(const std::string& run_id)> on_created;
};

struct ResumeRequest {
  std::string run_id;
  // KEY=VALUE over the recorded config (e.g. llm.budget.usd=5 for a larger budget).
  std::vector<std::string> overrides;
};

struct RunEnd {
  std::string run_id;
  LoopOutcome outcome;
};

// Errors: kBadInput / kNotFound for the user's input, others for failures
// before the loop could start. The loop's own end (completed, stopped,
// failed) is in RunEnd. When outcome.abandoned, threads are still running
// and the objects they use are deliberately kept alive: the caller must end
// the process (std::_Exit) without destroying the store.
// What StartOptimize checks of a request that names no task yet: flags,
// model spec, LLM settings, loop options, strategy, prompt templates and the
// device. A bench checks once, before it records anything.
Result<DeviceInfo> CheckOptimizeRequest(const OptimizeRequest& request);

Result<RunEnd> StartOptimize(Store& store, OptimizeRequest request, const StopRequest& stop,
                             ProgressReporter& progress);
Result<RunEnd> ResumeRun(Store& store, const ResumeRequest& request, const StopRequest& stop,
                         ProgressReporter& progress);

}  // namespace kforge::run
