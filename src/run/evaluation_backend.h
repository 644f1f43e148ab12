// Where the optimize loop sends candidates to be evaluated. The real backend
// runs kforge's Evaluator in-process, one worker per GPU (or one CPU worker);
// tests use a scripted fake. Evaluate() is called from worker threads, at most
// one call per worker at a time.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/result.h"
#include "eval/evaluator.h"
#include "task/task.h"

namespace kforge::run {

struct EvaluationRequest {
  std::string candidate_id;
  int64_t iteration = 0;
  std::string source;
  std::string sha256;
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
  // What the workers run on, for messages ("cuda:0,1", "cpu").
  virtual std::string Describe() const = 0;
};

// The Evaluator, one per worker. Candidates are written to
// `scratch_dir/<candidate id>.py` (the harness imports them from a file).
class EvaluatorBackend : public EvaluationBackend {
 public:
  // `gpus`: one worker per entry on cuda; ignored on cpu (one worker).
  EvaluatorBackend(Task task, EvalOptions options, std::vector<int> gpus,
                   std::filesystem::path scratch_dir);

  int workers() const override { return static_cast<int>(gpus_.size()); }
  Result<nlohmann::json> Evaluate(int worker, const EvaluationRequest& request) override;
  std::string Describe() const override;

 private:
  Task task_;
  EvalOptions options_;
  std::vector<int> gpus_;
  std::filesystem::path scratch_dir_;
};

}  // namespace kforge::run
