#include "store/sqlite_store.h"

#include <fmt/format.h>
#include <sqlite3.h>

#include <algorithm>
#include <filesystem>
#include <future>
#include <map>
#include <system_error>
#include <utility>

#include "common/hash.h"
#include "common/line_printer.h"
#include "store/schema.h"

// Early returns for Result/Status values; they keep the SQL paths readable.
#define STORE_CHECK(expr)                                \
  do {                                                   \
    auto store_check_ = (expr);                          \
    if (!store_check_.ok()) return store_check_.error(); \
  } while (0)

#define STORE_CONCAT_INNER(a, b) a##b
#define STORE_CONCAT(a, b) STORE_CONCAT_INNER(a, b)
#define STORE_ASSIGN(var, expr) STORE_ASSIGN_IMPL(var, expr, STORE_CONCAT(store_result_, __LINE__))
#define STORE_ASSIGN_IMPL(var, expr, tmp) \
  auto tmp = (expr);                      \
  if (!tmp.ok()) return tmp.error();      \
  auto var = std::move(*tmp)

namespace kforge {

using sqlite::Connection;
using sqlite::Statement;

namespace {

// Group commit: at most this many queued writes share one transaction.
constexpr size_t kMaxBatch = 256;

// --- column lists and row readers (shared by every query of a table) ---

constexpr const char* kRunColumns =
    "r.id, r.created_at, r.updated_at, r.status, r.task_name, r.task_path, r.task_hash, "
    "r.strategy, r.llm_spec, r.device, r.config_json, r.iterations_target, r.seed, r.islands";
constexpr int kRunColumnCount = 14;

Result<RunRecord> ReadRun(const Statement& st, int c) {
  RunRecord r;
  r.id = st.Text(c + 0);
  r.created_at = st.Text(c + 1);
  r.updated_at = st.Text(c + 2);
  STORE_ASSIGN(status, ParseRunStatus(st.Text(c + 3)));
  r.status = status;
  r.task_name = st.Text(c + 4);
  r.task_path = st.Text(c + 5);
  r.task_hash = st.Text(c + 6);
  r.strategy = st.Text(c + 7);
  r.llm_spec = st.Text(c + 8);
  r.device = st.Text(c + 9);
  r.config_json = st.Text(c + 10);
  r.iterations_target = st.Int(c + 11);
  r.seed = st.Int(c + 12);
  r.islands = st.Int(c + 13);
  return r;
}

constexpr const char* kCandidateColumns =
    "c.id, c.run_id, c.sha256, c.source, c.format, c.island, c.iteration, c.llm_call_id, "
    "c.created_at";
constexpr int kCandidateColumnCount = 9;

CandidateRecord ReadCandidate(const Statement& st, int c) {
  CandidateRecord r;
  r.id = st.Text(c + 0);
  r.run_id = st.Text(c + 1);
  r.sha256 = st.Text(c + 2);
  r.source = st.Text(c + 3);
  r.format = st.Text(c + 4);
  r.island = st.Int(c + 5);
  r.iteration = st.Int(c + 6);
  r.llm_call_id = st.Text(c + 7);
  r.created_at = st.Text(c + 8);
  return r;
}

constexpr const char* kEvaluationColumns =
    "e.candidate_id, e.run_id, e.eval_json, e.accepted, e.speedup_eager, e.speedup_compile, "
    "e.verdict, e.created_at";

EvaluationRecord ReadEvaluation(const Statement& st, int c) {
  EvaluationRecord r;
  r.candidate_id = st.Text(c + 0);
  r.run_id = st.Text(c + 1);
  r.eval_json = st.Text(c + 2);
  r.accepted = st.Int(c + 3) != 0;
  r.speedup_eager = st.OptDouble(c + 4);
  r.speedup_compile = st.OptDouble(c + 5);
  r.verdict = st.Text(c + 6);
  r.created_at = st.Text(c + 7);
  return r;
}

constexpr const char* kLlmCallColumns =
    "id, run_id, seq, stage, model_spec, request_hash, request_json, response_json, text, "
    "input_tokens, output_tokens, latency_ms, cost_usd, status, error, created_at";

LlmCallRecordRow ReadLlmCall(const Statement& st) {
  LlmCallRecordRow r;
  r.id = st.Text(0);
  r.run_id = st.Text(1);
  r.seq = st.Int(2);
  r.stage = st.Text(3);
  r.model_spec = st.Text(4);
  r.request_hash = st.Text(5);
  r.request_json = st.Text(6);
  r.response_json = st.Text(7);
  r.text = st.Text(8);
  r.input_tokens = st.Int(9);
  r.output_tokens = st.Int(10);
  r.latency_ms = st.Double(11);
  r.cost_usd = st.Double(12);
  r.status = st.Text(13);
  r.error = st.Text(14);
  r.created_at = st.Text(15);
  return r;
}

constexpr const char* kEventColumns =
    "run_id, seq, type, island, iteration, detail_json, created_at";

EventRecord ReadEvent(const Statement& st) {
  EventRecord r;
  r.run_id = st.Text(0);
  r.seq = st.Int(1);
  r.type = st.Text(2);
  r.island = st.OptInt(3);
  r.iteration = st.OptInt(4);
  r.detail_json = st.Text(5);
  r.created_at = st.Text(6);
  return r;
}

constexpr const char* kIdeaColumns =
    "run_id, idea_id, island, parent_idea_id, description, status, hypotheses_json, created_at, "
    "updated_at";

Result<IdeaRecord> ReadIdea(const Statement& st) {
  IdeaRecord r;
  r.run_id = st.Text(0);
  r.idea_id = st.Text(1);
  r.island = st.Int(2);
  r.parent_idea_id = st.Text(3);
  r.description = st.Text(4);
  STORE_ASSIGN(status, ParseIdeaStatus(st.Text(5)));
  r.status = status;
  r.hypotheses_json = st.Text(6);
  r.created_at = st.Text(7);
  r.updated_at = st.Text(8);
  return r;
}

constexpr const char* kJobColumns =
    "candidate_id, run_id, state, lease_owner, lease_expires_at, attempts, created_at, "
    "updated_at";

Result<JobRecord> ReadJob(const Statement& st) {
  JobRecord r;
  r.candidate_id = st.Text(0);
  r.run_id = st.Text(1);
  STORE_ASSIGN(state, ParseJobState(st.Text(2)));
  r.state = state;
  r.lease_owner = st.Text(3);
  r.lease_expires_at = st.Text(4);
  r.attempts = st.Int(5);
  r.created_at = st.Text(6);
  r.updated_at = st.Text(7);
  return r;
}

constexpr const char* kBenchColumns =
    "id, created_at, suite, strategy, llm_spec, device, config_json, iterations_target";

BenchRecord ReadBench(const Statement& st) {
  BenchRecord r;
  r.id = st.Text(0);
  r.created_at = st.Text(1);
  r.suite = st.Text(2);
  r.strategy = st.Text(3);
  r.llm_spec = st.Text(4);
  r.device = st.Text(5);
  r.config_json = st.Text(6);
  r.iterations_target = st.Int(7);
  return r;
}

constexpr const char* kBenchRunColumns =
    "bench_id, task, task_path, position, run_id, degenerate, degenerate_reason, created_at, "
    "updated_at";

BenchRunRecord ReadBenchRun(const Statement& st) {
  BenchRunRecord r;
  r.bench_id = st.Text(0);
  r.task = st.Text(1);
  r.task_path = st.Text(2);
  r.position = st.Int(3);
  r.run_id = st.Text(4);
  r.degenerate = st.Int(5) != 0;
  r.degenerate_reason = st.Text(6);
  r.created_at = st.Text(7);
  r.updated_at = st.Text(8);
  return r;
}

// Steps through every row, converting each with `read`.
template <class T, class Reader>
Result<std::vector<T>> CollectRows(Statement& st, Reader read) {
  std::vector<T> rows;
  while (true) {
    STORE_ASSIGN(has_row, st.Step());
    if (!has_row) return rows;
    Result<T> row = read(st);
    if (!row.ok()) return row.error();
    rows.push_back(std::move(*row));
  }
}

Result<int64_t> QueryInt(Connection& c, std::string_view sql, const std::string& arg = {}) {
  STORE_ASSIGN(st, c.Prepare(sql));
  if (!arg.empty()) st.Bind(arg);
  STORE_ASSIGN(has_row, st.Step());
  return has_row ? st.Int(0) : 0;
}

Status RequireBench(Connection& c, const std::string& bench_id) {
  STORE_ASSIGN(n, QueryInt(c, "SELECT COUNT(*) FROM benches WHERE id = ?", bench_id));
  if (n == 0) {
    return Error::NotFound(fmt::format("bench '{}' not found in {}", bench_id, c.path()));
  }
  return Status::Ok();
}

Status RequireRun(Connection& c, const std::string& run_id) {
  STORE_ASSIGN(n, QueryInt(c, "SELECT COUNT(*) FROM runs WHERE id = ?", run_id));
  if (n == 0) return Error::NotFound(fmt::format("run '{}' not found in {}", run_id, c.path()));
  return Status::Ok();
}

std::string IsoUtcAfter(int64_t ms) {
  return IsoUtc(std::chrono::system_clock::now() + std::chrono::milliseconds(ms));
}

// Parent ids of the given candidates (all of one run, or one candidate).
Status AttachParents(Connection& c, std::vector<CandidateRecord*> candidates) {
  if (candidates.empty()) return Status::Ok();
  std::map<std::string, CandidateRecord*> by_id;
  for (CandidateRecord* cand : candidates) by_id[cand->id] = cand;
  // One candidate: its own rows; several (always of one run): the run's rows.
  bool single = candidates.size() == 1;
  Result<Statement> st = c.Prepare(
      single ? "SELECT candidate_id, parent_id FROM candidate_parents WHERE candidate_id = ? "
               "ORDER BY candidate_id, position"
             : "SELECT p.candidate_id, p.parent_id FROM candidate_parents p "
               "JOIN candidates c ON c.id = p.candidate_id WHERE c.run_id = ? "
               "ORDER BY p.candidate_id, p.position");
  if (!st.ok()) return st.error();
  st->Bind(single ? candidates[0]->id : candidates[0]->run_id);
  while (true) {
    STORE_ASSIGN(has_row, st->Step());
    if (!has_row) return Status::Ok();
    auto it = by_id.find(st->Text(0));
    if (it != by_id.end()) it->second->parent_ids.push_back(st->Text(1));
  }
}

Result<int64_t> NextSeq(Connection& c, const char* table, const std::string& run_id) {
  STORE_ASSIGN(
      max_seq,
      QueryInt(c, fmt::format("SELECT COALESCE(MAX(seq), 0) FROM {} WHERE run_id = ?", table),
               run_id));
  return max_seq + 1;
}

Result<int64_t> InsertEvent(Connection& c, EventRecord e) {
  STORE_CHECK(RequireRun(c, e.run_id));
  if (e.seq <= 0) {
    STORE_ASSIGN(seq, NextSeq(c, "events", e.run_id));
    e.seq = seq;
  }
  if (e.created_at.empty()) e.created_at = IsoUtcNow();
  STORE_ASSIGN(st,
               c.Prepare("INSERT INTO events (run_id, seq, type, island, iteration, detail_json, "
                         "created_at) VALUES (?, ?, ?, ?, ?, ?, ?)"));
  st.Bind(e.run_id)
      .Bind(e.seq)
      .Bind(e.type)
      .Bind(e.island)
      .Bind(e.iteration)
      .Bind(e.detail_json)
      .Bind(e.created_at);
  Status s = st.Run();
  if (!s.ok()) {
    return Error::BadInput(
        fmt::format("recording event {} of run '{}': {}", e.seq, e.run_id, s.error().message));
  }
  return e.seq;
}

Result<int64_t> CurrentSchemaVersion(Connection& c) {
  STORE_ASSIGN(has_table, QueryInt(c,
                                   "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND "
                                   "name = 'schema_migrations'"));
  if (has_table == 0) return 0;
  return QueryInt(c, "SELECT COALESCE(MAX(version), 0) FROM schema_migrations");
}

Error NewerSchemaError(const std::string& path, int64_t found, size_t known) {
  return Error::BadInput(fmt::format(
      "{}: database schema version {} is newer than this kforge understands (version {}); "
      "use a newer kforge",
      path, found, known));
}

Status Rollback(Connection& c) {
  if (!c.Autocommit()) return c.Exec("ROLLBACK");
  return Status::Ok();
}

}  // namespace

Status ApplySqliteMigrations(Connection& c, const std::vector<std::string>& migrations) {
  STORE_ASSIGN(has_table, QueryInt(c,
                                   "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND "
                                   "name = 'schema_migrations'"));
  if (has_table == 0) {
    STORE_ASSIGN(tables, QueryInt(c, "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table'"));
    if (tables > 0) {
      return Error::BadInput(fmt::format(
          "{}: an SQLite database, but not a kforge store (it has no schema_migrations table)",
          c.path()));
    }
  }
  const size_t known = migrations.size();
  while (true) {
    // Checked without the write lock first, so opening an up-to-date store
    // never waits for another process's writes.
    STORE_ASSIGN(current, CurrentSchemaVersion(c));
    if (current > static_cast<int64_t>(known)) return NewerSchemaError(c.path(), current, known);
    if (current == static_cast<int64_t>(known)) return Status::Ok();

    STORE_CHECK(c.Exec("BEGIN IMMEDIATE"));
    auto apply_next = [&]() -> Status {
      STORE_CHECK(
          c.Exec("CREATE TABLE IF NOT EXISTS schema_migrations (version BIGINT PRIMARY KEY, "
                 "applied_at TEXT NOT NULL)"));
      // Re-read under the write lock: another process may have migrated meanwhile.
      STORE_ASSIGN(locked_current, CurrentSchemaVersion(c));
      if (locked_current > static_cast<int64_t>(known)) {
        return NewerSchemaError(c.path(), locked_current, known);
      }
      if (locked_current == static_cast<int64_t>(known)) return Status::Ok();
      int64_t next = locked_current + 1;
      Status applied = c.Exec(migrations[static_cast<size_t>(next - 1)]);
      if (!applied.ok()) {
        return Error{applied.error().kind, fmt::format("applying schema migration {}: {}", next,
                                                       applied.error().message)};
      }
      STORE_ASSIGN(st,
                   c.Prepare("INSERT INTO schema_migrations (version, applied_at) VALUES (?, ?)"));
      st.Bind(next).Bind(IsoUtcNow());
      return st.Run();
    };
    Status s = apply_next();
    if (!s.ok()) {
      (void)Rollback(c);
      return s;
    }
    STORE_CHECK(c.Exec("COMMIT"));
  }
}

// --- opening and the writer thread ---

Result<std::unique_ptr<SqliteStore>> SqliteStore::Open(const std::string& path,
                                                       const StoreOptions& options) {
  namespace fs = std::filesystem;
  if (path.empty()) return Error::BadInput("empty database path");
  if (path == ":memory:" || path.rfind("file:", 0) == 0) {
    return Error::BadInput(fmt::format(
        "database path '{}' is not supported: the store needs a plain file (WAL mode)", path));
  }
  fs::path file(path);
  fs::path dir = file.has_parent_path() ? file.parent_path() : fs::path(".");
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    return Error::BadInput(
        fmt::format("cannot open database {}: directory {} does not exist", path, dir.string()));
  }
  bool exists = fs::exists(file, ec);
  if (exists && fs::is_directory(file, ec)) {
    return Error::BadInput(fmt::format("cannot open database {}: it is a directory", path));
  }
  if (!exists && !options.create_if_missing) {
    return Error::NotFound(fmt::format("no database at {}", path));
  }

  STORE_ASSIGN(writer, Connection::Open(path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE,
                                        options.busy_timeout_ms));
  // The first statement is where SQLite notices a file that is not a database.
  STORE_ASSIGN(mode, writer.QueryText("PRAGMA journal_mode=WAL"));
  if (mode != "wal") {
    return Error::Io(fmt::format(
        "{}: could not switch the database to WAL mode (journal_mode is '{}'); the file system "
        "may not support it",
        path, mode));
  }
  STORE_CHECK(writer.Exec("PRAGMA foreign_keys=ON; PRAGMA synchronous=FULL"));
  STORE_ASSIGN(fk, writer.QueryText("PRAGMA foreign_keys"));
  if (fk != "1") return Error::Internal("this SQLite build does not enforce foreign keys");
  STORE_CHECK(ApplySqliteMigrations(writer, StoreMigrations()));

  STORE_ASSIGN(reader, Connection::Open(path, SQLITE_OPEN_READWRITE, options.busy_timeout_ms));
  STORE_CHECK(reader.Exec("PRAGMA foreign_keys=ON; PRAGMA query_only=ON"));

  return std::unique_ptr<SqliteStore>(new SqliteStore(path, std::move(writer), std::move(reader)));
}

SqliteStore::SqliteStore(std::string path, Connection writer, Connection reader)
    : path_(std::move(path)), writer_(std::move(writer)), reader_(std::move(reader)) {
  writer_thread_ = std::thread([this] { WriterLoop(); });
}

SqliteStore::~SqliteStore() {
  {
    std::lock_guard<std::mutex> lock(queue_mu_);
    stopping_ = true;
  }
  queue_cv_.notify_all();
  if (writer_thread_.joinable()) writer_thread_.join();
}

void SqliteStore::Enqueue(WriteOp op) {
  {
    std::lock_guard<std::mutex> lock(queue_mu_);
    if (!stopping_) {
      queue_.push_back(std::move(op));
      queue_cv_.notify_one();
      return;
    }
  }
  op.finish(Error::Internal(fmt::format("{}: the store is closed", path_)));
}

void SqliteStore::WriterLoop() {
  while (true) {
    std::deque<WriteOp> batch;
    {
      std::unique_lock<std::mutex> lock(queue_mu_);
      queue_cv_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stopping, and everything queued is written
      size_t n = std::min(queue_.size(), kMaxBatch);
      for (size_t i = 0; i < n; ++i) {
        batch.push_back(std::move(queue_.front()));
        queue_.pop_front();
      }
    }
    CommitBatch(batch);
  }
}

void SqliteStore::CommitBatch(std::deque<WriteOp>& batch) {
  Status begin = writer_.Exec("BEGIN IMMEDIATE");
  if (!begin.ok()) {
    for (WriteOp& op : batch) op.finish(begin);
    return;
  }
  std::vector<Status> outcomes;
  outcomes.reserve(batch.size());
  std::optional<Error> fatal;  // the transaction itself is gone
  for (WriteOp& op : batch) {
    if (fatal) {
      outcomes.emplace_back(*fatal);
      continue;
    }
    Status saved = writer_.Exec("SAVEPOINT write_op");
    if (!saved.ok()) {
      fatal = saved.error();
      outcomes.push_back(saved);
      continue;
    }
    Status s = op.apply(writer_);
    if (s.ok()) {
      s = writer_.Exec("RELEASE write_op");
    } else if (!writer_.Autocommit()) {
      // Undo only this write; its neighbours in the batch still commit.
      Status undo = writer_.Exec("ROLLBACK TO write_op; RELEASE write_op");
      if (!undo.ok()) fatal = undo.error();
    }
    // Some errors (disk full, I/O) make SQLite roll back the whole transaction.
    if (!fatal && writer_.Autocommit()) {
      fatal =
          s.ok() ? Error::Internal(fmt::format("{}: transaction ended early", path_)) : s.error();
    }
    outcomes.push_back(s);
  }
  Status end = Status::Ok();
  if (fatal) {
    (void)Rollback(writer_);
    end = *fatal;
  } else {
    end = writer_.Exec("COMMIT");
    if (!end.ok()) (void)Rollback(writer_);
  }
  for (size_t i = 0; i < batch.size(); ++i) {
    batch[i].finish(end.ok() || !outcomes[i].ok() ? outcomes[i] : end);
  }
}

template <class T>
Result<T> SqliteStore::Write(std::function<Result<T>(Connection&)> fn) {
  auto slot = std::make_shared<std::optional<Result<T>>>();
  auto done = std::make_shared<std::promise<Result<T>>>();
  std::future<Result<T>> future = done->get_future();
  Enqueue(WriteOp{[fn = std::move(fn), slot](Connection& c) -> Status {
                    slot->emplace(fn(c));
                    if ((*slot)->ok()) return Status::Ok();
                    return (*slot)->error();
                  },
                  [slot, done](const Status& outcome) {
                    if (!outcome.ok()) {
                      done->set_value(outcome.error());
                    } else {
                      done->set_value(std::move(**slot));
                    }
                  }});
  return future.get();
}

Status SqliteStore::WriteStatus(std::function<Status(Connection&)> fn) {
  Result<bool> r = Write<bool>([&fn](Connection& c) -> Result<bool> {
    Status s = fn(c);
    if (!s.ok()) return s.error();
    return true;
  });
  if (!r.ok()) return r.error();
  return Status::Ok();
}

template <class T>
Result<T> SqliteStore::Read(const std::function<Result<T>(Connection&)>& fn) {
  std::lock_guard<std::mutex> lock(read_mu_);
  STORE_CHECK(reader_.Exec("BEGIN"));
  Result<T> r = fn(reader_);
  Status end = reader_.Exec("COMMIT");
  if (!end.ok()) (void)Rollback(reader_);
  return r;
}

Status SqliteStore::Flush() {
  STORE_CHECK(WriteStatus([](Connection&) { return Status::Ok(); }));
  std::lock_guard<std::mutex> lock(queue_mu_);
  if (!async_error_) return Status::Ok();
  Error e = std::move(*async_error_);
  async_error_.reset();
  return e;
}

// --- runs ---

Result<std::string> SqliteStore::CreateRun(RunRecord run) {
  if (run.id.empty()) run.id = NewRunId();
  if (run.created_at.empty()) run.created_at = IsoUtcNow();
  if (run.updated_at.empty()) run.updated_at = run.created_at;
  return Write<std::string>([&run](Connection& c) -> Result<std::string> {
    STORE_ASSIGN(n, QueryInt(c, "SELECT COUNT(*) FROM runs WHERE id = ?", run.id));
    if (n > 0) return Error::BadInput(fmt::format("run '{}' already exists", run.id));
    STORE_ASSIGN(st, c.Prepare("INSERT INTO runs (id, created_at, updated_at, status, task_name, "
                               "task_path, task_hash, strategy, llm_spec, device, config_json, "
                               "iterations_target, seed, islands) "
                               "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"));
    st.Bind(run.id).Bind(run.created_at).Bind(run.updated_at).Bind(RunStatusName(run.status));
    st.Bind(run.task_name).Bind(run.task_path).Bind(run.task_hash).Bind(run.strategy);
    st.Bind(run.llm_spec).Bind(run.device).Bind(run.config_json).Bind(run.iterations_target);
    st.Bind(run.seed).Bind(run.islands);
    STORE_CHECK(st.Run());
    return run.id;
  });
}

Status SqliteStore::SetRunStatus(const std::string& run_id, RunStatus status) {
  return WriteStatus([&](Connection& c) -> Status {
    STORE_ASSIGN(st, c.Prepare("UPDATE runs SET status = ?, updated_at = ? WHERE id = ?"));
    st.Bind(RunStatusName(status)).Bind(IsoUtcNow()).Bind(run_id);
    STORE_CHECK(st.Run());
    if (c.Changes() == 0) return Error::NotFound(fmt::format("run '{}' not found", run_id));
    return Status::Ok();
  });
}

Result<RunRecord> SqliteStore::GetRun(const std::string& run_id) {
  return Read<RunRecord>([&](Connection& c) -> Result<RunRecord> {
    STORE_ASSIGN(st, c.Prepare(fmt::format("SELECT {} FROM runs r WHERE r.id = ?", kRunColumns)));
    st.Bind(run_id);
    STORE_ASSIGN(has_row, st.Step());
    if (!has_row) return Error::NotFound(fmt::format("run '{}' not found in {}", run_id, path_));
    return ReadRun(st, 0);
  });
}

Result<std::vector<RunSummary>> SqliteStore::ListRuns() {
  return Read<std::vector<RunSummary>>([&](Connection& c) -> Result<std::vector<RunSummary>> {
    STORE_ASSIGN(st, c.Prepare(fmt::format(
                         "SELECT {}, (SELECT COUNT(*) FROM evaluations e WHERE e.run_id = r.id) "
                         "FROM runs r ORDER BY r.created_at DESC, r.id DESC",
                         kRunColumns)));
    return CollectRows<RunSummary>(st, [](const Statement& s) -> Result<RunSummary> {
      STORE_ASSIGN(run, ReadRun(s, 0));
      return RunSummary{std::move(run), s.Int(kRunColumnCount)};
    });
  });
}

// --- tasks and baselines ---

Status SqliteStore::PutTask(const TaskRecord& task) {
  if (task.task_hash.empty()) return Error::BadInput("task record without a task hash");
  return WriteStatus([&](Connection& c) -> Status {
    STORE_ASSIGN(st, c.Prepare("INSERT INTO tasks (task_hash, name, path, source, created_at) "
                               "VALUES (?, ?, ?, ?, ?) ON CONFLICT (task_hash) DO NOTHING"));
    st.Bind(task.task_hash).Bind(task.name).Bind(task.path).Bind(task.source);
    st.Bind(task.created_at.empty() ? IsoUtcNow() : task.created_at);
    return st.Run();
  });
}

Result<std::optional<TaskRecord>> SqliteStore::GetTask(const std::string& task_hash) {
  using Out = std::optional<TaskRecord>;
  return Read<Out>([&](Connection& c) -> Result<Out> {
    STORE_ASSIGN(st, c.Prepare("SELECT task_hash, name, path, source, created_at FROM tasks "
                               "WHERE task_hash = ?"));
    st.Bind(task_hash);
    STORE_ASSIGN(has_row, st.Step());
    if (!has_row) return Out();
    return Out(TaskRecord{st.Text(0), st.Text(1), st.Text(2), st.Text(3), st.Text(4)});
  });
}

Status SqliteStore::PutBaseline(const BaselineRecord& b) {
  return WriteStatus([&](Connection& c) -> Status {
    STORE_ASSIGN(st, c.Prepare("INSERT INTO baselines (task_hash, gpu_name, torch_version, "
                               "baseline_json, created_at) VALUES (?, ?, ?, ?, ?) "
                               "ON CONFLICT (task_hash, gpu_name, torch_version) DO UPDATE SET "
                               "baseline_json = excluded.baseline_json, "
                               "created_at = excluded.created_at"));
    st.Bind(b.task_hash).Bind(b.gpu_name).Bind(b.torch_version).Bind(b.baseline_json);
    st.Bind(b.created_at.empty() ? IsoUtcNow() : b.created_at);
    return st.Run();
  });
}

Result<std::optional<BaselineRecord>> SqliteStore::GetBaseline(const std::string& task_hash,
                                                               const std::string& gpu_name,
                                                               const std::string& torch_version) {
  using Out = std::optional<BaselineRecord>;
  return Read<Out>([&](Connection& c) -> Result<Out> {
    STORE_ASSIGN(st, c.Prepare("SELECT task_hash, gpu_name, torch_version, baseline_json, "
                               "created_at FROM baselines WHERE task_hash = ? AND gpu_name = ? "
                               "AND torch_version = ?"));
    st.Bind(task_hash).Bind(gpu_name).Bind(torch_version);
    STORE_ASSIGN(has_row, st.Step());
    if (!has_row) return Out();
    return Out(BaselineRecord{st.Text(0), st.Text(1), st.Text(2), st.Text(3), st.Text(4)});
  });
}

// --- candidates ---

Result<CandidateInsert> SqliteStore::AddCandidate(CandidateRecord cand) {
  if (cand.sha256.empty()) cand.sha256 = Sha256Hex(cand.source);
  if (cand.id.empty()) cand.id = RandomHexId();
  if (cand.created_at.empty()) cand.created_at = IsoUtcNow();
  return Write<CandidateInsert>([&cand](Connection& c) -> Result<CandidateInsert> {
    STORE_CHECK(RequireRun(c, cand.run_id));
    {
      STORE_ASSIGN(st, c.Prepare("SELECT id FROM candidates WHERE run_id = ? AND sha256 = ?"));
      st.Bind(cand.run_id).Bind(cand.sha256);
      STORE_ASSIGN(has_row, st.Step());
      if (has_row) return CandidateInsert{st.Text(0), false};
    }
    STORE_ASSIGN(st, c.Prepare("INSERT INTO candidates (id, run_id, sha256, source, format, "
                               "island, iteration, llm_call_id, created_at) "
                               "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"));
    st.Bind(cand.id).Bind(cand.run_id).Bind(cand.sha256).Bind(cand.source).Bind(cand.format);
    st.Bind(cand.island).Bind(cand.iteration).BindTextOrNull(cand.llm_call_id);
    st.Bind(cand.created_at);
    Status inserted = st.Run();
    if (!inserted.ok()) {
      return Error::BadInput(fmt::format("recording candidate {} of run '{}': {}", cand.id,
                                         cand.run_id, inserted.error().message));
    }
    for (size_t i = 0; i < cand.parent_ids.size(); ++i) {
      STORE_ASSIGN(p, c.Prepare("INSERT INTO candidate_parents (candidate_id, position, "
                                "parent_id) VALUES (?, ?, ?)"));
      p.Bind(cand.id).Bind(static_cast<int64_t>(i)).Bind(cand.parent_ids[i]);
      Status linked = p.Run();
      if (!linked.ok()) {
        return Error::BadInput(fmt::format("candidate {}: parent '{}' is not a recorded candidate",
                                           cand.id, cand.parent_ids[i]));
      }
    }
    return CandidateInsert{cand.id, true};
  });
}

Result<CandidateRecord> SqliteStore::GetCandidate(const std::string& candidate_id) {
  return Read<CandidateRecord>([&](Connection& c) -> Result<CandidateRecord> {
    STORE_ASSIGN(st, c.Prepare(fmt::format("SELECT {} FROM candidates c WHERE c.id = ?",
                                           kCandidateColumns)));
    st.Bind(candidate_id);
    STORE_ASSIGN(has_row, st.Step());
    if (!has_row) return Error::NotFound(fmt::format("candidate '{}' not found", candidate_id));
    CandidateRecord cand = ReadCandidate(st, 0);
    STORE_CHECK(AttachParents(c, {&cand}));
    return cand;
  });
}

Result<std::optional<CandidateRecord>> SqliteStore::FindCandidate(const std::string& run_id,
                                                                  const std::string& sha256) {
  using Out = std::optional<CandidateRecord>;
  return Read<Out>([&](Connection& c) -> Result<Out> {
    STORE_ASSIGN(
        st, c.Prepare(fmt::format("SELECT {} FROM candidates c WHERE c.run_id = ? AND c.sha256 = ?",
                                  kCandidateColumns)));
    st.Bind(run_id).Bind(sha256);
    STORE_ASSIGN(has_row, st.Step());
    if (!has_row) return Out();
    CandidateRecord cand = ReadCandidate(st, 0);
    STORE_CHECK(AttachParents(c, {&cand}));
    return Out(std::move(cand));
  });
}

Result<std::vector<CandidateRecord>> SqliteStore::CandidatesOfRun(const std::string& run_id) {
  using Out = std::vector<CandidateRecord>;
  return Read<Out>([&](Connection& c) -> Result<Out> {
    STORE_ASSIGN(st, c.Prepare(fmt::format("SELECT {} FROM candidates c WHERE c.run_id = ? "
                                           "ORDER BY c.iteration, c.created_at, c.id",
                                           kCandidateColumns)));
    st.Bind(run_id);
    STORE_ASSIGN(
        rows, CollectRows<CandidateRecord>(st, [](const Statement& s) -> Result<CandidateRecord> {
          return ReadCandidate(s, 0);
        }));
    std::vector<CandidateRecord*> ptrs;
    for (auto& r : rows) ptrs.push_back(&r);
    STORE_CHECK(AttachParents(c, ptrs));
    return rows;
  });
}

// --- evaluations ---

Result<bool> SqliteStore::RecordEvaluation(const EvaluationRecord& ev) {
  if (ev.candidate_id.empty()) return Error::BadInput("evaluation without a candidate id");
  std::string now = ev.created_at.empty() ? IsoUtcNow() : ev.created_at;
  return Write<bool>([&](Connection& c) -> Result<bool> {
    std::string run_id;
    {
      STORE_ASSIGN(st, c.Prepare("SELECT run_id FROM candidates WHERE id = ?"));
      st.Bind(ev.candidate_id);
      STORE_ASSIGN(has_row, st.Step());
      if (!has_row) {
        return Error::NotFound(
            fmt::format("evaluation of unknown candidate '{}'", ev.candidate_id));
      }
      run_id = st.Text(0);
    }
    STORE_ASSIGN(st, c.Prepare("INSERT INTO evaluations (candidate_id, run_id, eval_json, "
                               "accepted, speedup_eager, speedup_compile, verdict, created_at) "
                               "VALUES (?, ?, ?, ?, ?, ?, ?, ?) "
                               "ON CONFLICT (candidate_id) DO NOTHING"));
    st.Bind(ev.candidate_id).Bind(run_id).Bind(ev.eval_json).Bind(int64_t{ev.accepted ? 1 : 0});
    st.Bind(ev.speedup_eager).Bind(ev.speedup_compile).Bind(ev.verdict).Bind(now);
    STORE_CHECK(st.Run());
    bool inserted = c.Changes() == 1;
    STORE_ASSIGN(job, c.Prepare("UPDATE jobs SET state = 'done', updated_at = ? "
                                "WHERE candidate_id = ? AND state <> 'done'"));
    job.Bind(now).Bind(ev.candidate_id);
    STORE_CHECK(job.Run());
    return inserted;
  });
}

Result<std::optional<EvaluationRecord>> SqliteStore::GetEvaluation(
    const std::string& candidate_id) {
  using Out = std::optional<EvaluationRecord>;
  return Read<Out>([&](Connection& c) -> Result<Out> {
    STORE_ASSIGN(st, c.Prepare(fmt::format("SELECT {} FROM evaluations e WHERE e.candidate_id = ?",
                                           kEvaluationColumns)));
    st.Bind(candidate_id);
    STORE_ASSIGN(has_row, st.Step());
    if (!has_row) return Out();
    return Out(ReadEvaluation(st, 0));
  });
}

Result<std::vector<EvaluatedCandidate>> SqliteStore::EvaluationsOfRun(const std::string& run_id) {
  using Out = std::vector<EvaluatedCandidate>;
  return Read<Out>([&](Connection& c) -> Result<Out> {
    STORE_ASSIGN(st, c.Prepare(fmt::format("SELECT {}, {} FROM evaluations e JOIN candidates c ON "
                                           "c.id = e.candidate_id WHERE e.run_id = ? "
                                           "ORDER BY c.iteration, c.created_at, c.id",
                                           kCandidateColumns, kEvaluationColumns)));
    st.Bind(run_id);
    STORE_ASSIGN(
        rows,
        CollectRows<EvaluatedCandidate>(st, [](const Statement& s) -> Result<EvaluatedCandidate> {
          return EvaluatedCandidate{ReadCandidate(s, 0), ReadEvaluation(s, kCandidateColumnCount)};
        }));
    std::vector<CandidateRecord*> ptrs;
    for (auto& r : rows) ptrs.push_back(&r.candidate);
    STORE_CHECK(AttachParents(c, ptrs));
    return rows;
  });
}

Result<std::optional<EvaluatedCandidate>> SqliteStore::BestEvaluation(const std::string& run_id,
                                                                      bool include_suspect) {
  using Out = std::optional<EvaluatedCandidate>;
  return Read<Out>([&](Connection& c) -> Result<Out> {
    STORE_ASSIGN(st, c.Prepare(fmt::format(
                         "SELECT {}, {} FROM evaluations e JOIN candidates c ON "
                         "c.id = e.candidate_id WHERE e.run_id = ? AND e.accepted = 1 "
                         "AND e.speedup_eager IS NOT NULL AND (e.verdict <> 'suspect' OR ? = 1) "
                         "ORDER BY e.speedup_eager DESC, e.created_at, c.iteration, c.id LIMIT 1",
                         kCandidateColumns, kEvaluationColumns)));
    st.Bind(run_id).Bind(int64_t{include_suspect ? 1 : 0});
    STORE_ASSIGN(has_row, st.Step());
    if (!has_row) return Out();
    EvaluatedCandidate best{ReadCandidate(st, 0), ReadEvaluation(st, kCandidateColumnCount)};
    STORE_CHECK(AttachParents(c, {&best.candidate}));
    return Out(std::move(best));
  });
}

Result<int64_t> SqliteStore::CountEvaluations(const std::string& run_id) {
  return Read<int64_t>([&](Connection& c) {
    return QueryInt(c, "SELECT COUNT(*) FROM evaluations WHERE run_id = ?", run_id);
  });
}

// --- LLM calls ---

Result<LlmCallRecordRow> SqliteStore::RecordLlmCall(LlmCallRecordRow call) {
  if (call.id.empty()) call.id = RandomHexId();
  if (call.created_at.empty()) call.created_at = IsoUtcNow();
  return Write<LlmCallRecordRow>([&call](Connection& c) -> Result<LlmCallRecordRow> {
    STORE_CHECK(RequireRun(c, call.run_id));
    if (call.seq <= 0) {
      STORE_ASSIGN(seq, NextSeq(c, "llm_calls", call.run_id));
      call.seq = seq;
    } else {
      STORE_ASSIGN(used, c.Prepare("SELECT COUNT(*) FROM llm_calls WHERE run_id = ? AND seq = ?"));
      used.Bind(call.run_id).Bind(call.seq);
      STORE_ASSIGN(has_row, used.Step());
      if (has_row && used.Int(0) > 0) {
        return Error::BadInput(
            fmt::format("LLM call seq {} is already recorded for run '{}'", call.seq, call.run_id));
      }
    }
    STORE_ASSIGN(st, c.Prepare(fmt::format("INSERT INTO llm_calls ({}) VALUES (?, ?, ?, ?, ?, ?, "
                                           "?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                                           kLlmCallColumns)));
    st.Bind(call.id).Bind(call.run_id).Bind(call.seq).Bind(call.stage).Bind(call.model_spec);
    st.Bind(call.request_hash).Bind(call.request_json).Bind(call.response_json).Bind(call.text);
    st.Bind(call.input_tokens).Bind(call.output_tokens).Bind(call.latency_ms).Bind(call.cost_usd);
    st.Bind(call.status).Bind(call.error).Bind(call.created_at);
    Status s = st.Run();
    if (!s.ok()) {
      return Error::BadInput(fmt::format("recording LLM call {} of run '{}': {}", call.id,
                                         call.run_id, s.error().message));
    }
    return call;
  });
}

Result<std::vector<LlmCallRecordRow>> SqliteStore::LlmCallsOfRun(const std::string& run_id) {
  using Out = std::vector<LlmCallRecordRow>;
  return Read<Out>([&](Connection& c) -> Result<Out> {
    STORE_ASSIGN(st, c.Prepare(fmt::format("SELECT {} FROM llm_calls WHERE run_id = ? ORDER BY seq",
                                           kLlmCallColumns)));
    st.Bind(run_id);
    return CollectRows<LlmCallRecordRow>(
        st, [](const Statement& s) -> Result<LlmCallRecordRow> { return ReadLlmCall(s); });
  });
}

Result<LlmUsage> SqliteStore::LlmUsageOfRun(const std::string& run_id) {
  return Read<LlmUsage>([&](Connection& c) -> Result<LlmUsage> {
    STORE_ASSIGN(st, c.Prepare("SELECT COUNT(*), COALESCE(SUM(input_tokens), 0), "
                               "COALESCE(SUM(output_tokens), 0), COALESCE(SUM(cost_usd), 0) "
                               "FROM llm_calls WHERE run_id = ?"));
    st.Bind(run_id);
    STORE_ASSIGN(has_row, st.Step());
    if (!has_row) return LlmUsage{};
    return LlmUsage{st.Int(0), st.Int(1), st.Int(2), st.Double(3)};
  });
}

Result<int64_t> SqliteStore::NextLlmCallSeq(const std::string& run_id) {
  // Through the writer queue, so writes queued before it are counted.
  return Write<int64_t>([&](Connection& c) { return NextSeq(c, "llm_calls", run_id); });
}

// --- events ---

Result<int64_t> SqliteStore::RecordEvent(EventRecord event) {
  return Write<int64_t>([&event](Connection& c) { return InsertEvent(c, event); });
}

void SqliteStore::RecordEventAsync(EventRecord event) {
  if (event.created_at.empty()) event.created_at = IsoUtcNow();
  Enqueue(WriteOp{[event = std::move(event)](Connection& c) -> Status {
                    Result<int64_t> r = InsertEvent(c, event);
                    if (!r.ok()) return r.error();
                    return Status::Ok();
                  },
                  [this](const Status& outcome) {
                    if (outcome.ok()) return;
                    bool first = false;
                    {
                      std::lock_guard<std::mutex> lock(queue_mu_);
                      if (!async_error_) {
                        async_error_ = outcome.error();
                        first = true;
                      }
                    }
                    // Said once per Flush() period, so a failing database cannot flood stderr.
                    if (first) {
                      LinePrinter::Get().Warn(fmt::format("store: an event was not recorded: {}",
                                                          outcome.error().message));
                    }
                  }});
}

Result<std::vector<EventRecord>> SqliteStore::EventsOfRun(const std::string& run_id) {
  using Out = std::vector<EventRecord>;
  return Read<Out>([&](Connection& c) -> Result<Out> {
    STORE_ASSIGN(st, c.Prepare(fmt::format("SELECT {} FROM events WHERE run_id = ? ORDER BY seq",
                                           kEventColumns)));
    st.Bind(run_id);
    return CollectRows<EventRecord>(
        st, [](const Statement& s) -> Result<EventRecord> { return ReadEvent(s); });
  });
}

Result<int64_t> SqliteStore::NextEventSeq(const std::string& run_id) {
  return Write<int64_t>([&](Connection& c) { return NextSeq(c, "events", run_id); });
}

// --- ideas ---

Status SqliteStore::UpsertIdea(const IdeaRecord& idea) {
  if (idea.idea_id.empty()) return Error::BadInput("idea record without an idea id");
  std::string now = IsoUtcNow();
  return WriteStatus([&](Connection& c) -> Status {
    STORE_CHECK(RequireRun(c, idea.run_id));
    STORE_ASSIGN(st, c.Prepare(fmt::format(
                         "INSERT INTO ideas ({}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) "
                         "ON CONFLICT (run_id, idea_id) DO UPDATE SET island = excluded.island, "
                         "parent_idea_id = excluded.parent_idea_id, "
                         "description = excluded.description, status = excluded.status, "
                         "hypotheses_json = excluded.hypotheses_json, "
                         "updated_at = excluded.updated_at",
                         kIdeaColumns)));
    st.Bind(idea.run_id).Bind(idea.idea_id).Bind(idea.island).BindTextOrNull(idea.parent_idea_id);
    st.Bind(idea.description).Bind(IdeaStatusName(idea.status)).Bind(idea.hypotheses_json);
    st.Bind(idea.created_at.empty() ? now : idea.created_at);
    st.Bind(idea.updated_at.empty() ? now : idea.updated_at);
    return st.Run();
  });
}

Result<std::vector<IdeaRecord>> SqliteStore::IdeasOfRun(const std::string& run_id) {
  using Out = std::vector<IdeaRecord>;
  return Read<Out>([&](Connection& c) -> Result<Out> {
    STORE_ASSIGN(st,
                 c.Prepare(fmt::format(
                     "SELECT {} FROM ideas WHERE run_id = ? ORDER BY island, created_at, idea_id",
                     kIdeaColumns)));
    st.Bind(run_id);
    return CollectRows<IdeaRecord>(st, [](const Statement& s) { return ReadIdea(s); });
  });
}

// --- strategy state ---

Status SqliteStore::PutStrategyState(const std::string& run_id, const std::string& state_json) {
  std::string now = IsoUtcNow();
  return WriteStatus([&](Connection& c) -> Status {
    STORE_CHECK(RequireRun(c, run_id));
    STORE_ASSIGN(st,
                 c.Prepare("INSERT INTO strategy_states (run_id, state_json, updated_at) "
                           "VALUES (?, ?, ?) ON CONFLICT (run_id) DO UPDATE SET "
                           "state_json = excluded.state_json, updated_at = excluded.updated_at"));
    st.Bind(run_id).Bind(state_json).Bind(now);
    return st.Run();
  });
}

Result<std::optional<std::string>> SqliteStore::GetStrategyState(const std::string& run_id) {
  using Out = std::optional<std::string>;
  return Read<Out>([&](Connection& c) -> Result<Out> {
    STORE_ASSIGN(st, c.Prepare("SELECT state_json FROM strategy_states WHERE run_id = ?"));
    st.Bind(run_id);
    STORE_ASSIGN(has_row, st.Step());
    if (!has_row) return Out{};
    return Out{st.Text(0)};
  });
}

// --- knowledge bases ---

Status SqliteStore::PutKnowledgeBase(const std::string& arch, const std::string& kb_json) {
  if (arch.empty()) return Error::BadInput("a knowledge base needs an architecture");
  std::string now = IsoUtcNow();
  return WriteStatus([&](Connection& c) -> Status {
    STORE_ASSIGN(st, c.Prepare("INSERT INTO knowledge_bases (arch, kb_json, updated_at) "
                               "VALUES (?, ?, ?) ON CONFLICT (arch) DO UPDATE SET "
                               "kb_json = excluded.kb_json, updated_at = excluded.updated_at"));
    st.Bind(arch).Bind(kb_json).Bind(now);
    return st.Run();
  });
}

Result<std::optional<std::string>> SqliteStore::GetKnowledgeBase(const std::string& arch) {
  using Out = std::optional<std::string>;
  return Read<Out>([&](Connection& c) -> Result<Out> {
    STORE_ASSIGN(st, c.Prepare("SELECT kb_json FROM knowledge_bases WHERE arch = ?"));
    st.Bind(arch);
    STORE_ASSIGN(has_row, st.Step());
    if (!has_row) return Out{};
    return Out{st.Text(0)};
  });
}

// --- jobs ---

Result<bool> SqliteStore::EnqueueJob(const std::string& run_id, const std::string& candidate_id) {
  std::string now = IsoUtcNow();
  return Write<bool>([&](Connection& c) -> Result<bool> {
    {
      STORE_ASSIGN(st, c.Prepare("SELECT run_id FROM candidates WHERE id = ?"));
      st.Bind(candidate_id);
      STORE_ASSIGN(has_row, st.Step());
      if (!has_row) {
        return Error::NotFound(fmt::format("job for unknown candidate '{}'", candidate_id));
      }
      if (st.Text(0) != run_id) {
        return Error::BadInput(fmt::format("candidate '{}' belongs to run '{}', not '{}'",
                                           candidate_id, st.Text(0), run_id));
      }
    }
    STORE_ASSIGN(st, c.Prepare(fmt::format("INSERT INTO jobs ({}) VALUES (?, ?, 'pending', '', "
                                           "'', 0, ?, ?) ON CONFLICT (candidate_id) DO NOTHING",
                                           kJobColumns)));
    st.Bind(candidate_id).Bind(run_id).Bind(now).Bind(now);
    STORE_CHECK(st.Run());
    return c.Changes() == 1;
  });
}

Result<std::optional<JobRecord>> SqliteStore::LeaseJob(const std::string& run_id,
                                                       const std::string& owner, int64_t lease_ms) {
  using Out = std::optional<JobRecord>;
  if (owner.empty()) return Error::BadInput("a job lease needs an owner");
  if (lease_ms < 0) return Error::BadInput("a job lease cannot be negative");
  return Write<Out>([&](Connection& c) -> Result<Out> {
    std::string now = IsoUtcNow();
    std::string candidate_id;
    {
      STORE_ASSIGN(st, c.Prepare("SELECT candidate_id FROM jobs WHERE (run_id = ? OR ? = '') "
                                 "AND (state = 'pending' OR (state = 'leased' AND "
                                 "lease_expires_at < ?)) "
                                 "ORDER BY created_at, candidate_id LIMIT 1"));
      st.Bind(run_id).Bind(run_id).Bind(now);
      STORE_ASSIGN(has_row, st.Step());
      if (!has_row) return Out();
      candidate_id = st.Text(0);
    }
    {
      STORE_ASSIGN(st, c.Prepare("UPDATE jobs SET state = 'leased', lease_owner = ?, "
                                 "lease_expires_at = ?, attempts = attempts + 1, updated_at = ? "
                                 "WHERE candidate_id = ?"));
      st.Bind(owner).Bind(IsoUtcAfter(lease_ms)).Bind(now).Bind(candidate_id);
      STORE_CHECK(st.Run());
    }
    STORE_ASSIGN(st,
                 c.Prepare(fmt::format("SELECT {} FROM jobs WHERE candidate_id = ?", kJobColumns)));
    st.Bind(candidate_id);
    STORE_ASSIGN(has_row, st.Step());
    if (!has_row) return Error::Internal("leased job vanished");
    STORE_ASSIGN(job, ReadJob(st));
    return Out(std::move(job));
  });
}

Status SqliteStore::HeartbeatJob(const std::string& candidate_id, const std::string& owner,
                                 int64_t lease_ms) {
  if (lease_ms < 0) return Error::BadInput("a job lease cannot be negative");
  return WriteStatus([&](Connection& c) -> Status {
    STORE_ASSIGN(st, c.Prepare("UPDATE jobs SET lease_expires_at = ?, updated_at = ? "
                               "WHERE candidate_id = ? AND state = 'leased' AND lease_owner = ?"));
    st.Bind(IsoUtcAfter(lease_ms)).Bind(IsoUtcNow()).Bind(candidate_id).Bind(owner);
    STORE_CHECK(st.Run());
    if (c.Changes() == 0) {
      return Error::BadInput(
          fmt::format("the job of candidate '{}' is not leased by '{}'", candidate_id, owner));
    }
    return Status::Ok();
  });
}

Status SqliteStore::CompleteJob(const std::string& candidate_id) {
  return WriteStatus([&](Connection& c) -> Status {
    STORE_ASSIGN(st, c.Prepare("UPDATE jobs SET state = 'done', updated_at = ? "
                               "WHERE candidate_id = ?"));
    st.Bind(IsoUtcNow()).Bind(candidate_id);
    STORE_CHECK(st.Run());
    if (c.Changes() == 0) {
      return Error::NotFound(fmt::format("no job for candidate '{}'", candidate_id));
    }
    return Status::Ok();
  });
}

Result<std::vector<JobRecord>> SqliteStore::PendingJobs(const std::string& run_id) {
  using Out = std::vector<JobRecord>;
  return Read<Out>([&](Connection& c) -> Result<Out> {
    STORE_ASSIGN(st, c.Prepare(fmt::format("SELECT {} FROM jobs WHERE run_id = ? AND "
                                           "state <> 'done' ORDER BY created_at, candidate_id",
                                           kJobColumns)));
    st.Bind(run_id);
    return CollectRows<JobRecord>(st, [](const Statement& s) { return ReadJob(s); });
  });
}

// --- benches ---

Result<std::string> SqliteStore::CreateBench(BenchRecord bench) {
  if (bench.id.empty()) bench.id = NewBenchId();
  if (bench.created_at.empty()) bench.created_at = IsoUtcNow();
  return Write<std::string>([&bench](Connection& c) -> Result<std::string> {
    STORE_ASSIGN(n, QueryInt(c, "SELECT COUNT(*) FROM benches WHERE id = ?", bench.id));
    if (n > 0) return Error::BadInput(fmt::format("bench '{}' already exists", bench.id));
    STORE_ASSIGN(st,
                 c.Prepare(fmt::format("INSERT INTO benches ({}) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                                       kBenchColumns)));
    st.Bind(bench.id).Bind(bench.created_at).Bind(bench.suite).Bind(bench.strategy);
    st.Bind(bench.llm_spec).Bind(bench.device).Bind(bench.config_json);
    st.Bind(bench.iterations_target);
    STORE_CHECK(st.Run());
    return bench.id;
  });
}

Result<BenchRecord> SqliteStore::GetBench(const std::string& bench_id) {
  return Read<BenchRecord>([&](Connection& c) -> Result<BenchRecord> {
    STORE_ASSIGN(st, c.Prepare(fmt::format("SELECT {} FROM benches WHERE id = ?", kBenchColumns)));
    st.Bind(bench_id);
    STORE_ASSIGN(has_row, st.Step());
    if (!has_row) {
      return Error::NotFound(fmt::format("bench '{}' not found in {}", bench_id, path_));
    }
    return ReadBench(st);
  });
}

Status SqliteStore::AddBenchRun(const BenchRunRecord& bench_run) {
  if (bench_run.task.empty()) return Error::BadInput("bench run record without a task name");
  std::string now = IsoUtcNow();
  return WriteStatus([&](Connection& c) -> Status {
    STORE_CHECK(RequireBench(c, bench_run.bench_id));
    STORE_CHECK(RequireRun(c, bench_run.run_id));
    STORE_ASSIGN(
        st, c.Prepare(fmt::format("INSERT INTO bench_runs ({}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) "
                                  "ON CONFLICT (bench_id, task) DO UPDATE SET "
                                  "task_path = excluded.task_path, position = excluded.position, "
                                  "run_id = excluded.run_id, degenerate = excluded.degenerate, "
                                  "degenerate_reason = excluded.degenerate_reason, "
                                  "updated_at = excluded.updated_at",
                                  kBenchRunColumns)));
    st.Bind(bench_run.bench_id).Bind(bench_run.task).Bind(bench_run.task_path);
    st.Bind(bench_run.position).Bind(bench_run.run_id);
    st.Bind(int64_t{bench_run.degenerate ? 1 : 0}).Bind(bench_run.degenerate_reason);
    st.Bind(bench_run.created_at.empty() ? now : bench_run.created_at);
    st.Bind(bench_run.updated_at.empty() ? now : bench_run.updated_at);
    return st.Run();
  });
}

Result<std::vector<BenchRunRecord>> SqliteStore::ListBenchRuns(const std::string& bench_id) {
  using Out = std::vector<BenchRunRecord>;
  return Read<Out>([&](Connection& c) -> Result<Out> {
    STORE_CHECK(RequireBench(c, bench_id));
    STORE_ASSIGN(st, c.Prepare(fmt::format(
                         "SELECT {} FROM bench_runs WHERE bench_id = ? ORDER BY position, task",
                         kBenchRunColumns)));
    st.Bind(bench_id);
    return CollectRows<BenchRunRecord>(
        st, [](const Statement& s) -> Result<BenchRunRecord> { return ReadBenchRun(s); });
  });
}

}  // namespace kforge
