// TaskScanner: the degeneracy scan of task references (`kforge tasks scan`).
// Only the clean reference process runs, over the same seeds and with the
// same rules an evaluation uses (JudgeDegeneracy), so a scan says in advance
// which tasks `kforge eval` will mark degenerate. No candidate, no timing.
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "eval/evaluator.h"
#include "eval/harness_process.h"
#include "eval/integrity.h"
#include "task/task.h"

namespace kforge {

struct TaskScanResult {
  std::string name;
  std::filesystem::path path;
  int level = 0;
  bool degenerate = false;
  std::optional<Degeneracy> degeneracy;
  // A task that could not be scanned: `error_kind` is bad_task (the file is
  // malformed), or how the reference process failed (crashed, timeout ...).
  std::optional<std::string> error;
  std::string error_kind;
  double seconds = 0;
  int seeds = 0;
  nlohmann::json outputs = nlohmann::json::array();  // first seed: shape, dtype, magnitude
  // Input-distribution variants: {"variant", "usable", "reason"} each, i.e.
  // whether an evaluation on this task can check candidates on it.
  nlohmann::json variants = nlohmann::json::array();
  double atol = 0, rtol = 0;

  nlohmann::json ToJson() const;
};

class TaskScanner {
 public:
  // Uses the evaluator's device, seed, trial count, dtype, tolerances and
  // sandbox time limits.
  explicit TaskScanner(EvalOptions options) : opt_(std::move(options)) {}
  ~TaskScanner();
  TaskScanner(const TaskScanner&) = delete;
  TaskScanner& operator=(const TaskScanner&) = delete;

  // One task. Never throws for the task's faults: they come back in `error`.
  // One reference process serves consecutive tasks (starting one costs
  // seconds); it is replaced after any failure that may have left it unwell.
  TaskScanResult Scan(const Task& task);
  // The device of the last successful load (null before one).
  const nlohmann::json& device() const { return device_; }

 private:
  std::optional<HarnessError> Call(const nlohmann::json& cmd, double timeout_s,
                                   nlohmann::json* reply);
  void StopProcess();

  EvalOptions opt_;
  std::optional<HarnessProcess> ref_;
  std::filesystem::path scratch_;
  int started_ = 0;
  nlohmann::json device_;
};

}  // namespace kforge
