// Store: everything kforge records about runs, in one database. SQLite is the
// default backend; a PostgreSQL backend is meant to implement the same
// interface and pass the same test suite (store_contract_test.cc).
//
// Write semantics, on every backend:
//  - A write method returns only after its data is durably committed, so a
//    caller can "write the intent, then act": once EnqueueJob() returned, a
//    run killed at any later moment still knows that evaluation was started.
//  - RecordEventAsync() is fire-and-forget telemetry: it never blocks on the
//    database; Flush() waits for it and reports the first failure since the
//    last Flush().
//  - Writes meant to be repeated after a crash are idempotent: AddCandidate
//    (by run and sha256), RecordEvaluation (the first one wins), EnqueueJob,
//    PutTask.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/config.h"
#include "common/result.h"
#include "store/records.h"

namespace kforge {

struct StoreOptions {
  // How long a write waits for another process's lock before failing.
  int64_t busy_timeout_ms = 5000;
  // When false, a missing database file is kNotFound instead of being created
  // (for commands that only read, such as `kforge show`).
  bool create_if_missing = true;
};

class Store {
 public:
  virtual ~Store() = default;

  // Where the data lives (a file path or URL), for messages.
  virtual std::string location() const = 0;

  // --- runs ---
  // Returns the run id (NewRunId() when run.id is empty). An existing id is kBadInput.
  virtual Result<std::string> CreateRun(RunRecord run) = 0;
  virtual Status SetRunStatus(const std::string& run_id, RunStatus status) = 0;
  // kNotFound when there is no such run.
  virtual Result<RunRecord> GetRun(const std::string& run_id) = 0;
  // Newest first, each with its number of evaluations.
  virtual Result<std::vector<RunSummary>> ListRuns() = 0;

  // --- tasks and baselines ---
  // Keeps the first record of a task hash.
  virtual Status PutTask(const TaskRecord& task) = 0;
  virtual Result<std::optional<TaskRecord>> GetTask(const std::string& task_hash) = 0;
  // Replaces an earlier baseline of the same (task, GPU, torch version).
  virtual Status PutBaseline(const BaselineRecord& baseline) = 0;
  virtual Result<std::optional<BaselineRecord>> GetBaseline(const std::string& task_hash,
                                                            const std::string& gpu_name,
                                                            const std::string& torch_version) = 0;

  // --- candidates ---
  // Idempotent by (run_id, sha256): a second identical candidate returns the
  // first one's id with inserted = false. An unknown run is kNotFound.
  virtual Result<CandidateInsert> AddCandidate(CandidateRecord candidate) = 0;
  virtual Result<CandidateRecord> GetCandidate(const std::string& candidate_id) = 0;
  virtual Result<std::optional<CandidateRecord>> FindCandidate(const std::string& run_id,
                                                               const std::string& sha256) = 0;
  // Ordered by iteration, then creation.
  virtual Result<std::vector<CandidateRecord>> CandidatesOfRun(const std::string& run_id) = 0;

  // --- evaluations ---
  // Records the evaluation of a candidate and marks its job done, in one
  // transaction. Returns false (and changes nothing) when the candidate already
  // has one: the first evaluation is kept. An unknown candidate is kNotFound.
  virtual Result<bool> RecordEvaluation(const EvaluationRecord& evaluation) = 0;
  virtual Result<std::optional<EvaluationRecord>> GetEvaluation(
      const std::string& candidate_id) = 0;
  // Ordered by the candidates' iteration, then creation.
  virtual Result<std::vector<EvaluatedCandidate>> EvaluationsOfRun(const std::string& run_id) = 0;
  // The accepted evaluation with the highest speedup.eager (ties: the earliest);
  // verdict "suspect" counts only when include_suspect. nullopt when none.
  virtual Result<std::optional<EvaluatedCandidate>> BestEvaluation(const std::string& run_id,
                                                                   bool include_suspect) = 0;
  virtual Result<int64_t> CountEvaluations(const std::string& run_id) = 0;

  // --- LLM calls ---
  // Returns the call as stored (id, seq and created_at filled). A seq already
  // used in the run is kBadInput.
  virtual Result<LlmCallRecordRow> RecordLlmCall(LlmCallRecordRow call) = 0;
  // Ordered by seq.
  virtual Result<std::vector<LlmCallRecordRow>> LlmCallsOfRun(const std::string& run_id) = 0;
  virtual Result<LlmUsage> LlmUsageOfRun(const std::string& run_id) = 0;
  // After every write queued before it (async events included).
  virtual Result<int64_t> NextLlmCallSeq(const std::string& run_id) = 0;

  // --- events ---
  // Durable; returns the event's seq.
  virtual Result<int64_t> RecordEvent(EventRecord event) = 0;
  // Fire-and-forget; seq 0 is assigned in queue order.
  virtual void RecordEventAsync(EventRecord event) = 0;
  // Ordered by seq. Async events appear once written (Flush() to be sure).
  virtual Result<std::vector<EventRecord>> EventsOfRun(const std::string& run_id) = 0;
  virtual Result<int64_t> NextEventSeq(const std::string& run_id) = 0;

  // --- ideas (the PACEvolve idea pool) ---
  // Inserts or replaces by (run_id, idea_id); created_at is kept from the first write.
  virtual Status UpsertIdea(const IdeaRecord& idea) = 0;
  virtual Result<std::vector<IdeaRecord>> IdeasOfRun(const std::string& run_id) = 0;

  // --- strategy state (strategies that persist more than evaluations) ---
  // Inserts or replaces the run's one saved state. An unknown run is kNotFound.
  virtual Status PutStrategyState(const std::string& run_id, const std::string& state_json) = 0;
  // nullopt when the run has none.
  virtual Result<std::optional<std::string>> GetStrategyState(const std::string& run_id) = 0;

  // --- knowledge bases (one JSON document per GPU architecture, across runs) ---
  // Inserts or replaces the architecture's document. An empty arch is kBadInput.
  virtual Status PutKnowledgeBase(const std::string& arch, const std::string& kb_json) = 0;
  // nullopt when the architecture has none stored.
  virtual Result<std::optional<std::string>> GetKnowledgeBase(const std::string& arch) = 0;

  // --- evaluation jobs ---
  // Idempotent: returns false when the candidate already has a job.
  virtual Result<bool> EnqueueJob(const std::string& run_id, const std::string& candidate_id) = 0;
  // Leases the oldest pending job (or one whose lease expired) of run_id, or of
  // any run when run_id is empty; nullopt when there is none.
  virtual Result<std::optional<JobRecord>> LeaseJob(const std::string& run_id,
                                                    const std::string& owner, int64_t lease_ms) = 0;
  // Extends a lease; kBadInput when `owner` no longer holds it.
  virtual Status HeartbeatJob(const std::string& candidate_id, const std::string& owner,
                              int64_t lease_ms) = 0;
  virtual Status CompleteJob(const std::string& candidate_id) = 0;
  // Jobs of the run not done yet (pending or leased), oldest first.
  virtual Result<std::vector<JobRecord>> PendingJobs(const std::string& run_id) = 0;

  // --- benches (a suite, one run per task) ---
  // Returns the bench id (NewBenchId() when bench.id is empty). An existing id is kBadInput.
  virtual Result<std::string> CreateBench(BenchRecord bench) = 0;
  // kNotFound when there is no such bench.
  virtual Result<BenchRecord> GetBench(const std::string& bench_id) = 0;
  // Inserts or replaces by (bench_id, task), so a resumed bench can record a
  // task's new run or its degeneracy; created_at is kept from the first
  // write. An unknown bench or run is kNotFound.
  virtual Status AddBenchRun(const BenchRunRecord& bench_run) = 0;
  // Ordered by position, then task. kNotFound when there is no such bench.
  virtual Result<std::vector<BenchRunRecord>> ListBenchRuns(const std::string& bench_id) = 0;

  // Waits until every queued write is committed; returns the first error of an
  // async write since the last Flush().
  virtual Status Flush() = 0;
};

// "PATH", "sqlite:PATH" or "sqlite://PATH" open (and create) an SQLite store;
// "postgresql://..." is kBadInput until that backend exists.
Result<std::unique_ptr<Store>> OpenStore(const std::string& path_or_url,
                                         const StoreOptions& options = {});

void RegisterStoreConfig(ConfigSchema& schema);
StoreOptions StoreOptionsFromConfig(const Config& config);

}  // namespace kforge
