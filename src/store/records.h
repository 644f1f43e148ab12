// Plain records the Store reads and writes. JSON payloads (eval results, LLM
// requests, event details) travel as text: the store indexes a few columns
// and never interprets the rest, so the JSON shapes belong to their modules.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"

namespace kforge {

enum class RunStatus { kCreated, kRunning, kCompleted, kStopped, kFailed };
std::string_view RunStatusName(RunStatus status);
Result<RunStatus> ParseRunStatus(std::string_view name);

enum class IdeaStatus { kActive, kPruned, kRejected };
std::string_view IdeaStatusName(IdeaStatus status);
Result<IdeaStatus> ParseIdeaStatus(std::string_view name);

enum class JobState { kPending, kLeased, kDone };
std::string_view JobStateName(JobState state);
Result<JobState> ParseJobState(std::string_view name);

// Timestamps are ISO-8601 UTC with microseconds and a fixed width
// ("2026-11-23T14:30:12.123456Z"), so text order is time order on every backend.
std::string IsoUtc(std::chrono::system_clock::time_point t);
std::string IsoUtcNow();
// 16 random lower-case hex digits (from the OS entropy source, so a forked
// child never repeats its parent's ids).
std::string RandomHexId();
// "20261123-143012-3fa9c1": sorts by creation time and reads well in a terminal.
std::string NewRunId();
// "bench-20261123-143012-3fa9c1": a bench id never reads as a run id.
std::string NewBenchId();

struct RunRecord {
  std::string id;          // NewRunId() when left empty
  std::string created_at;  // filled by the store when empty
  std::string updated_at;  // set by the store on every status change
  RunStatus status = RunStatus::kCreated;
  std::string task_name;
  std::string task_path;
  std::string task_hash;
  std::string strategy;
  std::string llm_spec;
  std::string device;
  std::string config_json = "{}";
  int64_t iterations_target = 0;
  int64_t seed = 0;
  int64_t islands = 1;
};

struct RunSummary {
  RunRecord run;
  int64_t evaluations = 0;
};

struct TaskRecord {
  std::string task_hash;  // key: SHA-256 of the task source
  std::string name;
  std::string path;
  std::string source;
  std::string created_at;
};

// One measured baseline per (task, GPU, torch version).
struct BaselineRecord {
  std::string task_hash;
  std::string gpu_name;
  std::string torch_version;
  std::string baseline_json;
  std::string created_at;
};

struct CandidateRecord {
  std::string id;  // RandomHexId() when left empty
  std::string run_id;
  std::string sha256;  // of `source`; (run_id, sha256) is unique
  std::string source;
  std::string format;                   // kernelbench | native | cpp
  std::vector<std::string> parent_ids;  // candidate ids, in the order given
  int64_t island = 0;
  int64_t iteration = 0;
  std::string llm_call_id;  // the call whose answer this is; empty when none
  std::string created_at;
};

struct CandidateInsert {
  std::string id;  // the new candidate's id, or the existing one with the same sha256
  bool inserted = false;
};

struct EvaluationRecord {
  std::string candidate_id;
  std::string run_id;     // taken from the candidate on write; filled on read
  std::string eval_json;  // the full `kforge eval --json` object
  bool accepted = false;
  std::optional<double> speedup_eager;
  std::optional<double> speedup_compile;
  std::string verdict;  // ok | suspect | rejected
  std::string created_at;
};

struct EvaluatedCandidate {
  CandidateRecord candidate;
  EvaluationRecord evaluation;
};

struct LlmCallRecordRow {
  std::string id;  // RandomHexId() when left empty
  std::string run_id;
  int64_t seq = 0;  // 0: the store assigns the next number of the run
  std::string stage;
  std::string model_spec;
  std::string request_hash;
  std::string request_json;
  std::string response_json;
  std::string text;
  int64_t input_tokens = 0;
  int64_t output_tokens = 0;
  double latency_ms = 0;
  double cost_usd = 0;
  std::string status;  // ok | error | invalid ...
  std::string error;   // empty when none
  std::string created_at;
};

struct LlmUsage {
  int64_t calls = 0;
  int64_t input_tokens = 0;
  int64_t output_tokens = 0;
  double cost_usd = 0;
};

struct EventRecord {
  std::string run_id;
  int64_t seq = 0;  // 0: the store assigns the next number of the run
  std::string type;
  std::optional<int64_t> island;
  std::optional<int64_t> iteration;
  std::string detail_json = "{}";
  std::string created_at;
};

struct IdeaRecord {
  std::string run_id;
  std::string idea_id;
  int64_t island = 0;
  std::string parent_idea_id;  // the macro idea this one refines; empty for a macro idea
  std::string description;
  IdeaStatus status = IdeaStatus::kActive;
  std::string hypotheses_json = "[]";
  std::string created_at;  // kept from the first write
  std::string updated_at;
};

// A bench: one suite run the same way, one run per task (`kforge bench`).
struct BenchRecord {
  std::string id;          // NewBenchId() when left empty
  std::string created_at;  // filled by the store when empty
  std::string suite;       // the suite as given: a directory or a list file
  std::string strategy;
  std::string llm_spec;
  std::string device;
  std::string config_json = "{}";
  int64_t iterations_target = 0;
};

// One task of a bench and the run that optimizes it; key (bench_id, task).
struct BenchRunRecord {
  std::string bench_id;
  std::string task;  // the task's name, unique within the bench
  std::string task_path;
  int64_t position = 0;  // the task's place in the suite (report order)
  std::string run_id;
  // Known to the bench before or after the run (e.g. from its baselines); a
  // report also treats a task as degenerate when an evaluation said so.
  bool degenerate = false;
  std::string degenerate_reason;
  std::string created_at;  // kept from the first write
  std::string updated_at;
};

// An evaluation intent: written before the evaluation starts, so a run killed
// mid-evaluation knows on resume which candidates still need one.
struct JobRecord {
  std::string candidate_id;
  std::string run_id;
  JobState state = JobState::kPending;
  std::string lease_owner;
  std::string lease_expires_at;
  int64_t attempts = 0;
  std::string created_at;
  std::string updated_at;
};

}  // namespace kforge
