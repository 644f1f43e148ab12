// What the run commands print (CONTRACT.md: optimize/resume --json, show
// --json, runs --json, best --out), built from the store alone so that
// `kforge show` can run beside a live `kforge optimize`.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/result.h"
#include "run/optimize_loop.h"
#include "store/store.h"

namespace kforge::run {

// {"run_id", "status", "evaluations", "best": {...} | null, "llm": {...}}
// plus "target", "reason" (stopped or failed), "task", "strategy".
Result<nlohmann::json> RunResultJson(Store& store, const std::string& run_id,
                                     const LoopOutcome* outcome);
// {"run_id", "status", "task", "strategy", "evaluations": [...], "events": [...], "best"}
// plus "target", "llm", "llm_spec", "device", "created_at", "updated_at".
Result<nlohmann::json> ShowJson(Store& store, const std::string& run_id);
// The same, readable.
Result<std::string> ShowText(Store& store, const std::string& run_id);
// [{"run_id", "status", "task", "strategy", "created_at", "evaluations"}], newest first.
Result<nlohmann::json> RunsJson(Store& store);
Result<std::string> RunsText(Store& store);

struct ExportedBest {
  std::filesystem::path source_path;     // the candidate's source, verbatim (.py or .cu)
  std::filesystem::path model_new_path;  // model_new.py
  std::string candidate_id;
  double speedup_eager = 0;
};
// Writes the best accepted candidate (verdict ok) of the run into `dir`
// (created if missing): `<task>_<candidate id>.py` as generated, and
// `model_new.py`, the same module with a header saying where it came from
// and how to use it. A native candidate is written as `<task>_<candidate
// id>.cu`, and model_new.py is then a PyTorch wrapper around it
// (native_export.h), which embeds the task's recorded source. kNotFound when
// the run has no accepted candidate (or, for a native one, no task source).
Result<ExportedBest> ExportBest(Store& store, const std::string& run_id,
                                const std::filesystem::path& dir);

// The process exit code for a run's end: 0 completed or stopped (by a
// budget, a stop request or no new candidates: the run is resumable), 2 when
// it failed on the user's input, 1 when it failed otherwise.
int RunExitCode(const LoopOutcome& outcome);

}  // namespace kforge::run
