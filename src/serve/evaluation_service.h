// What the server's workers call to evaluate a request. The product's
// implementation runs kforge's Evaluator in-process, as `kforge eval` does;
// tests give the server a fake, so the HTTP layer is load-tested in
// milliseconds.
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/result.h"
#include "eval/builds_ahead.h"
#include "eval/evaluation_session.h"
#include "eval/evaluator.h"
#include "serve/evaluate_request.h"

namespace kforge::serve {

class EvaluationService {
 public:
  virtual ~EvaluationService() = default;
  // Evaluations that may run at once (worker indices 0..workers()-1).
  virtual int workers() const = 0;
  // The device, for /v1/health: {"kind": "cuda", "hardware": "...", "gpus": [0, 1]}.
  virtual nlohmann::json DeviceJson() const = 0;
  // The `kforge eval --json` object. Called from worker threads, at most one
  // call per worker index at a time. A wrong, slow or crashing candidate is
  // a result; an error means the request cannot be evaluated as given
  // (kBadInput: a malformed task, a format the device cannot run) or the
  // evaluation itself failed (other kinds).
  virtual Result<nlohmann::json> Evaluate(int worker, const EvaluateRequest& request) = 0;
  // A request was queued: its candidate's build may start now, while the
  // workers evaluate earlier ones (no wait; any thread).
  virtual void Prepare(const EvaluateRequest& request) { (void)request; }
};

// The Evaluator, one call per worker at a time: on cuda worker k evaluates on
// gpus[k]; on cpu every worker is a CPU worker. Each request gets its own
// scratch directory under `scratch_root` holding <task_name>.py and the
// candidate (cand.py, or cand.cu for native), removed afterwards unless
// KFORGE_KEEP_SCRATCH=1. On cuda, queued candidates are built ahead
// (BuildsAhead: native objects, KernelBench extensions) from Prepare() on.
class InProcessEvaluationService : public EvaluationService {
 public:
  // `options.device` must be resolved (cuda or cpu). `cpu_workers` is used
  // on cpu only; on cuda there is one worker per entry of `gpus`.
  InProcessEvaluationService(EvalOptions options, std::vector<int> gpus, int cpu_workers,
                             std::string hardware, std::filesystem::path scratch_root);

  int workers() const override;
  nlohmann::json DeviceJson() const override;
  Result<nlohmann::json> Evaluate(int worker, const EvaluateRequest& request) override;
  void Prepare(const EvaluateRequest& request) override;

 private:
  EvalOptions options_;
  std::vector<int> gpus_;
  int cpu_workers_;
  std::string hardware_;
  std::filesystem::path scratch_root_;
  // One per worker: requests for the same task (by content) reuse its
  // reference process, trials and compiled program (eval.reuse_reference).
  std::vector<std::unique_ptr<EvaluationSession>> sessions_;
  std::unique_ptr<BuildsAhead> builds_;  // cuda only
};

}  // namespace kforge::serve
