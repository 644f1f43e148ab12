// CompileAhead: torch.compile builds of reference models on the host's
// cores, before their timing (`kforge baseline`). Each task gets its own
// `python -m kforge_harness.precompile` process, at most `jobs` at once; each
// leaves inductor's generated code in its on-disk caches, which the reference
// process's own torch.compile of the same graph then finds. Nothing here is
// timed: the caller runs it between timing windows, never during one.
#pragma once

#include <string>
#include <vector>

#include "eval/evaluator.h"
#include "task/task.h"

namespace kforge {

struct PrecompileOutcome {
  bool ok = false;
  std::string error;  // why not, when !ok (the timing run will meet it too)
  double seconds = 0;
};

// Builds every task's compile program, `jobs` at a time (jobs < 1: one),
// with the evaluator's device, GPU, dtype, seed and the model and trial-0
// seeds a timing run uses; `timeout_s` bounds each build. Outcomes in the
// order of `tasks`.
std::vector<PrecompileOutcome> CompileAhead(const std::vector<const Task*>& tasks,
                                            const EvalOptions& options, int jobs, double timeout_s);

}  // namespace kforge
