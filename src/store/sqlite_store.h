// SqliteStore: the Store in one SQLite file (WAL mode, foreign keys on).
//
// Threading: one writer thread owns the write connection; every write is a
// typed operation put on its queue, and the calling thread blocks on a future
// until the operation's transaction has committed (synchronous=FULL, so
// committed means on disk). The writer drains whatever is queued into one
// transaction (group commit) with a savepoint per operation, so one failing
// write does not undo its neighbours. Reads use a second connection guarded by
// a mutex; WAL lets them proceed while the writer commits.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "store/sqlite_connection.h"
#include "store/store.h"

namespace kforge {

class SqliteStore final : public Store {
 public:
  // Creates the file when missing (its directory must exist) and migrates it
  // to the current schema. A file that is not a kforge database, or one
  // written by a newer kforge, is kBadInput.
  static Result<std::unique_ptr<SqliteStore>> Open(const std::string& path,
                                                   const StoreOptions& options);
  ~SqliteStore() override;

  std::string location() const override { return path_; }

  Result<std::string> CreateRun(RunRecord run) override;
  Status SetRunStatus(const std::string& run_id, RunStatus status) override;
  Result<RunRecord> GetRun(const std::string& run_id) override;
  Result<std::vector<RunSummary>> ListRuns() override;

  Status PutTask(const TaskRecord& task) override;
  Result<std::optional<TaskRecord>> GetTask(const std::string& task_hash) override;
  Status PutBaseline(const BaselineRecord& baseline) override;
  Result<std::optional<BaselineRecord>> GetBaseline(const std::string& task_hash,
                                                    const std::string& gpu_name,
                                                    const std::string& torch_version) override;

  Result<CandidateInsert> AddCandidate(CandidateRecord candidate) override;
  Result<CandidateRecord> GetCandidate(const std::string& candidate_id) override;
  Result<std::optional<CandidateRecord>> FindCandidate(const std::string& run_id,
                                                       const std::string& sha256) override;
  Result<std::vector<CandidateRecord>> CandidatesOfRun(const std::string& run_id) override;

  Result<bool> RecordEvaluation(const EvaluationRecord& evaluation) override;
  Result<std::optional<EvaluationRecord>> GetEvaluation(const std::string& candidate_id) override;
  Result<std::vector<EvaluatedCandidate>> EvaluationsOfRun(const std::string& run_id) override;
  Result<std::optional<EvaluatedCandidate>> BestEvaluation(const std::string& run_id,
                                                           bool include_suspect) override;
  Result<int64_t> CountEvaluations(const std::string& run_id) override;

  Result<LlmCallRecordRow> RecordLlmCall(LlmCallRecordRow call) override;
  Result<std::vector<LlmCallRecordRow>> LlmCallsOfRun(const std::string& run_id) override;
  Result<LlmUsage> LlmUsageOfRun(const std::string& run_id) override;
  Result<int64_t> NextLlmCallSeq(const std::string& run_id) override;

  Result<int64_t> RecordEvent(EventRecord event) override;
  void RecordEventAsync(EventRecord event) override;
  Result<std::vector<EventRecord>> EventsOfRun(const std::string& run_id) override;
  Result<int64_t> NextEventSeq(const std::string& run_id) override;

  Status UpsertIdea(const IdeaRecord& idea) override;
  Result<std::vector<IdeaRecord>> IdeasOfRun(const std::string& run_id) override;
  Status PutStrategyState(const std::string& run_id, const std::string& state_json) override;
  Result<std::optional<std::string>> GetStrategyState(const std::string& run_id) override;
  Status PutKnowledgeBase(const std::string& arch, const std::string& kb_json) override;
  Result<std::optional<std::string>> GetKnowledgeBase(const std::string& arch) override;

  Result<bool> EnqueueJob(const std::string& run_id, const std::string& candidate_id) override;
  Result<std::optional<JobRecord>> LeaseJob(const std::string& run_id, const std::string& owner,
                                            int64_t lease_ms) override;
  Status HeartbeatJob(const std::string& candidate_id, const std::string& owner,
                      int64_t lease_ms) override;
  Status CompleteJob(const std::string& candidate_id) override;
  Result<std::vector<JobRecord>> PendingJobs(const std::string& run_id) override;

  Result<std::string> CreateBench(BenchRecord bench) override;
  Result<BenchRecord> GetBench(const std::string& bench_id) override;
  Status AddBenchRun(const BenchRunRecord& bench_run) override;
  Result<std::vector<BenchRunRecord>> ListBenchRuns(const std::string& bench_id) override;

  Status Flush() override;

 private:
  // One queued write: `apply` runs inside the batch transaction on the writer
  // thread; `finish` gets the outcome once the batch committed (or failed).
  struct WriteOp {
    std::function<Status(sqlite::Connection&)> apply;
    std::function<void(const Status&)> finish;
  };

  SqliteStore(std::string path, sqlite::Connection writer, sqlite::Connection reader);

  // Queues fn for the writer thread and waits for its committed result.
  template <class T>
  Result<T> Write(std::function<Result<T>(sqlite::Connection&)> fn);
  Status WriteStatus(std::function<Status(sqlite::Connection&)> fn);
  void Enqueue(WriteOp op);
  void WriterLoop();
  void CommitBatch(std::deque<WriteOp>& batch);

  // Runs fn on the read connection inside one read transaction (a consistent
  // snapshot across its queries).
  template <class T>
  Result<T> Read(const std::function<Result<T>(sqlite::Connection&)>& fn);

  const std::string path_;
  sqlite::Connection writer_;  // touched only by writer_thread_ once it runs

  std::mutex read_mu_;
  sqlite::Connection reader_;

  std::mutex queue_mu_;
  std::condition_variable queue_cv_;
  std::deque<WriteOp> queue_;
  bool stopping_ = false;
  std::optional<Error> async_error_;  // first failed async write since the last Flush()

  std::thread writer_thread_;
};

// Brings the database behind `conn` to version migrations.size(), one
// transaction per migration, recording each in schema_migrations. A database
// at a higher version is kBadInput. (Open() calls it with StoreMigrations().)
Status ApplySqliteMigrations(sqlite::Connection& conn, const std::vector<std::string>& migrations);

}  // namespace kforge
