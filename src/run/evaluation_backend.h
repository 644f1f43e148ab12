// Where the optimize loop sends candidates to be evaluated. The real backend
// runs kforge's Evaluator in-process, one worker per GPU (or one CPU worker);
// tests use a scripted fake. Evaluate() is called from worker threads, at most
// one call per worker at a time.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/result.h"
#include "eval/builds_ahead.h"
#include "eval/evaluator.h"
#include "task/task.h"

namespace kforge::run {

struct EvaluationRequest {
  std::string candidate_id;
  int64_t iteration = 0;
  std::string source;
  std::string sha256;
  // kernelbench or cpp follow the device; native is a .cu with the C ABI.
  bool native = false;
  // kFull for a candidate of the run; an agent's compile and verify tools
  // check drafts with less (their results are not recorded as evaluations).
  EvalDepth depth = EvalDepth::kFull;
};

class EvaluationBackend {
 public:
  virtual ~EvaluationBackend() = default;
  // Evaluations that can run at once (worker indices 0..workers()-1).
  virtual int workers() const = 0;
  // The contract's `kforge eval --json` object. A wrong, slow or crashing
  // candidate is a result, not an error; an error means the evaluation
  // itself could not be done (bad task: kBadInput; harness failure: other kinds).
  virtual Result<nlohmann::json> Evaluate(int worker, const EvaluationRequest& request) = 0;
  // Called as soon as a candidate exists, before it waits for a worker: a
  // backend may start building it (the compile farm runs ahead of the GPU).
  virtual void Prepare(const EvaluationRequest& request) { (void)request; }
  // What the workers run on, for messages ("cuda:0,1", "cpu").
  virtual std::string Describe() const = 0;
  // The GPU a worker evaluates on; none on a CPU device (or unknown).
  virtual std::optional<int> GpuOf(int worker) const {
    (void)worker;
    return std::nullopt;
  }
};

// The Evaluator, one per worker, each with a EvaluationSession: the reference
// process, its trials and its torch.compile program are set up for the first
// candidate a worker evaluates and reused for the next (options.
// reuse_reference). Candidates are written to
// `scratch_dir/<candidate id>.py` (or `.cu`; the harness imports them from a
// file). Native candidates are built by a NativeBuildQueue from Prepare() on,
// one compile process per core, while earlier candidates are timed; on cuda,
// KernelBench candidates' extensions likewise by an ExtensionBuildQueue.
class EvaluatorBackend : public EvaluationBackend {
 public:
  // `gpus`: one worker per entry on cuda; ignored on cpu (one worker).
  EvaluatorBackend(Task task, EvalOptions options, std::vector<int> gpus,
                   std::filesystem::path scratch_dir);

  int workers() const override { return static_cast<int>(gpus_.size()); }
  Result<nlohmann::json> Evaluate(int worker, const EvaluationRequest& request) override;
  void Prepare(const EvaluationRequest& request) override;
  std::string Describe() const override;
  std::optional<int> GpuOf(int worker) const override;
  // A native candidate's object, built for the first GPU's arch through the
  // compile farm (a cache hit once the candidate was evaluated): for its
  // profile. kBadInput when it does not build. Thread-safe.
  Result<std::filesystem::path> BuildNativeLibrary(const std::string& source);

 private:
  Task task_;
  EvalOptions options_;
  std::vector<int> gpus_;
  std::filesystem::path scratch_dir_;
  std::vector<std::unique_ptr<EvaluationSession>> sessions_;  // one per worker
  BuildsAhead builds_;  // the compile farm, running ahead of the workers
};

}  // namespace kforge::run
