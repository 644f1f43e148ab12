// SQLite-specific behaviour: file handling, locking, migrations, crash
// safety; and the contract suite instantiated for SQLite.
#include "store/sqlite_store.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "common/files.h"
#include "store/schema.h"
#include "store/store_contract_test.h"

namespace kforge {
namespace {

// --- the contract suite on SQLite ---

std::string SqliteLocation(const std::filesystem::path& scratch) {
  return (scratch / "kforge.db").string();
}

std::unique_ptr<Store> MakeSqliteStore(const std::string& location) {
  auto store = OpenStore(location);
  EXPECT_TRUE(store.ok()) << store.error().message;
  return store.ok() ? std::move(store).value() : nullptr;
}

}  // namespace
}  // namespace kforge

namespace kforge::store_testing {
INSTANTIATE_TEST_SUITE_P(Sqlite, StoreContractTest,
                         ::testing::Values(StoreBackend{"sqlite", &SqliteLocation,
                                                        &MakeSqliteStore}),
                         BackendName);
}  // namespace kforge::store_testing

namespace kforge {
namespace {

// --- SQLite-specific tests ---

RunRecord RunWithId(const std::string& id) {
  RunRecord run;
  run.id = id;
  return run;
}

StoreOptions WithBusyTimeout(int64_t ms) {
  StoreOptions options;
  options.busy_timeout_ms = ms;
  return options;
}

class SqliteStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto dir = MakeTempDir(std::filesystem::temp_directory_path(), "kforge-sqlite-test-");
    ASSERT_TRUE(dir.ok()) << dir.error().message;
    dir_ = *dir;
    path_ = (dir_ / "kforge.db").string();
  }
  void TearDown() override {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }

  std::unique_ptr<Store> MustOpen(const StoreOptions& options = {}) {
    auto store = OpenStore(path_, options);
    EXPECT_TRUE(store.ok()) << store.error().message;
    return store.ok() ? std::move(store).value() : nullptr;
  }

  // A connection of our own, as another process would have.
  sqlite::Connection Raw() {
    auto c = sqlite::Connection::Open(path_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, 0);
    EXPECT_TRUE(c.ok()) << c.error().message;
    return std::move(c).value();
  }

  std::filesystem::path dir_;
  std::string path_;
};

TEST_F(SqliteStoreTest, OpensInWalModeAtTheCurrentSchemaVersion) {
  auto store = MustOpen();
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(store->location(), path_);
  sqlite::Connection raw = Raw();
  auto mode = raw.QueryText("PRAGMA journal_mode");
  ASSERT_TRUE(mode.ok());
  EXPECT_EQ(*mode, "wal");
  auto version = raw.QueryText("SELECT MAX(version) FROM schema_migrations");
  ASSERT_TRUE(version.ok()) << version.error().message;
  EXPECT_EQ(*version, std::to_string(StoreSchemaVersion()));
  store.reset();
  store = MustOpen();  // reopening applies nothing twice
  ASSERT_NE(store, nullptr);
  auto rows = raw.QueryText("SELECT COUNT(*) FROM schema_migrations");
  ASSERT_TRUE(rows.ok());
  EXPECT_EQ(*rows, std::to_string(StoreSchemaVersion()));
}

TEST_F(SqliteStoreTest, ForeignKeysAreEnforced) {
  auto store = MustOpen();
  ASSERT_NE(store, nullptr);
  ASSERT_TRUE(store->CreateRun(RunWithId("r")).ok());
  // An idea whose run exists is fine; the schema's own reference checks catch
  // the rest, e.g. an evaluation job for a candidate that was never recorded.
  auto job = store->EnqueueJob("r", "never-recorded");
  ASSERT_FALSE(job.ok());
  EXPECT_EQ(job.error().kind, ErrorKind::kNotFound);
  sqlite::Connection raw = Raw();
  ASSERT_TRUE(raw.Exec("PRAGMA foreign_keys=ON").ok());
  Status direct = raw.Exec(
      "INSERT INTO evaluations (candidate_id, run_id, eval_json, accepted, verdict, created_at) "
      "VALUES ('ghost', 'r', '{}', 0, 'ok', 'now')");
  ASSERT_FALSE(direct.ok());
  EXPECT_NE(direct.error().message.find("FOREIGN KEY"), std::string::npos);
}

TEST_F(SqliteStoreTest, MigrationsApplyInOrderAndRollBackOnFailure) {
  sqlite::Connection raw = Raw();
  std::vector<std::string> v1 = {"CREATE TABLE a (x TEXT);"};
  ASSERT_TRUE(ApplySqliteMigrations(raw, v1).ok());
  ASSERT_TRUE(raw.Exec("INSERT INTO a VALUES ('kept')").ok());

  std::vector<std::string> v2 = {v1[0], "ALTER TABLE a ADD COLUMN y BIGINT NOT NULL DEFAULT 7;"};
  ASSERT_TRUE(ApplySqliteMigrations(raw, v2).ok());
  EXPECT_EQ(*raw.QueryText("SELECT MAX(version) FROM schema_migrations"), "2");
  EXPECT_EQ(*raw.QueryText("SELECT x || y FROM a"), "kept7");

  std::vector<std::string> broken = {v2[0], v2[1], "CREATE TABLE b (z TEXT); SELECT nonsense();"};
  Status s = ApplySqliteMigrations(raw, broken);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message.find("migration 3"), std::string::npos);
  EXPECT_EQ(*raw.QueryText("SELECT MAX(version) FROM schema_migrations"), "2");
  EXPECT_EQ(*raw.QueryText("SELECT COUNT(*) FROM sqlite_master WHERE name = 'b'"), "0");
}

TEST_F(SqliteStoreTest, VersionOneDatabaseGainsBenchTablesAndKeepsItsRuns) {
  {
    sqlite::Connection raw = Raw();
    ASSERT_TRUE(ApplySqliteMigrations(raw, {StoreMigrations()[0]}).ok());
    ASSERT_TRUE(raw.Exec("INSERT INTO runs VALUES ('old', 't', 't', 'completed', 'task', 'p', "
                         "'h', 'greedy', 'llm', 'cpu', '{}', 5, 1, 1)")
                    .ok());
  }
  auto store = MustOpen();
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(*Raw().QueryText("SELECT MAX(version) FROM schema_migrations"),
            std::to_string(StoreSchemaVersion()));
  auto run = store->GetRun("old");
  ASSERT_TRUE(run.ok()) << run.error().message;
  EXPECT_EQ(run->status, RunStatus::kCompleted);
  BenchRecord bench;
  bench.id = "b";
  ASSERT_TRUE(store->CreateBench(bench).ok());
  BenchRunRecord entry;
  entry.bench_id = "b";
  entry.task = "task";
  entry.run_id = "old";
  ASSERT_TRUE(store->AddBenchRun(entry).ok());
  auto entries = store->ListBenchRuns("b");
  ASSERT_TRUE(entries.ok()) << entries.error().message;
  ASSERT_EQ(entries->size(), 1u);
  EXPECT_EQ((*entries)[0].run_id, "old");
}

TEST_F(SqliteStoreTest, DatabaseFromANewerKforgeIsRefused) {
  MustOpen().reset();
  {
    sqlite::Connection raw = Raw();
    ASSERT_TRUE(raw.Exec(fmt::format("INSERT INTO schema_migrations VALUES ({}, 'later')",
                                     StoreSchemaVersion() + 1))
                    .ok());
  }
  auto store = OpenStore(path_);
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.error().kind, ErrorKind::kBadInput);
  EXPECT_NE(store.error().message.find("newer"), std::string::npos);
  EXPECT_NE(store.error().message.find(path_), std::string::npos);
}

TEST_F(SqliteStoreTest, OtherSqliteDatabaseIsRefused) {
  {
    sqlite::Connection raw = Raw();
    ASSERT_TRUE(raw.Exec("CREATE TABLE customers (name TEXT)").ok());
  }
  auto store = OpenStore(path_);
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.error().kind, ErrorKind::kBadInput);
  EXPECT_NE(store.error().message.find("not a kforge store"), std::string::npos);
}

TEST_F(SqliteStoreTest, FileThatIsNotADatabaseIsBadInput) {
  {
    std::ofstream out(path_);
    for (int i = 0; i < 200; ++i) out << "this is a text file, not a database\n";
  }
  auto store = OpenStore(path_);
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.error().kind, ErrorKind::kBadInput);
  EXPECT_NE(store.error().message.find(path_), std::string::npos);
  EXPECT_NE(store.error().message.find("not a database"), std::string::npos);
}

TEST_F(SqliteStoreTest, DamagedDatabaseIsBadInputNamingThePath) {
  {
    auto store = MustOpen();
    ASSERT_NE(store, nullptr);
    ASSERT_TRUE(store->CreateRun(RunWithId("r")).ok());
  }
  // Overwrite every page after the header page with noise.
  {
    std::fstream f(path_, std::ios::in | std::ios::out | std::ios::binary);
    f.seekg(0, std::ios::end);
    std::streamoff size = f.tellg();
    ASSERT_GT(size, 4096);
    f.seekp(4096);
    std::string noise(static_cast<size_t>(size - 4096), '\xA5');
    f.write(noise.data(), static_cast<std::streamsize>(noise.size()));
  }
  // The schema pages are damaged too, so opening is where it shows.
  auto store = OpenStore(path_);
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.error().kind, ErrorKind::kBadInput) << store.error().message;
  EXPECT_NE(store.error().message.find(path_), std::string::npos);
  EXPECT_NE(store.error().message.find("malformed"), std::string::npos);
}

TEST_F(SqliteStoreTest, WriteBlockedByAnotherWriterFailsClearlyAfterTheTimeout) {
  auto store = MustOpen(WithBusyTimeout(100));
  ASSERT_NE(store, nullptr);
  sqlite::Connection other = Raw();
  ASSERT_TRUE(
      other.Exec("BEGIN IMMEDIATE; INSERT INTO tasks VALUES ('h', 'n', 'p', 's', 't')").ok());

  auto start = std::chrono::steady_clock::now();
  auto blocked = store->CreateRun(RunWithId("r"));
  auto waited = std::chrono::steady_clock::now() - start;
  ASSERT_FALSE(blocked.ok());
  EXPECT_EQ(blocked.error().kind, ErrorKind::kTimeout);
  EXPECT_NE(blocked.error().message.find("locked"), std::string::npos);
  EXPECT_NE(blocked.error().message.find("store.busy_timeout_ms"), std::string::npos);
  EXPECT_GE(waited, std::chrono::milliseconds(90));
  EXPECT_LT(waited, std::chrono::seconds(3));
  // Readers are not blocked by a writer in WAL mode.
  EXPECT_TRUE(store->ListRuns().ok());

  ASSERT_TRUE(other.Exec("COMMIT").ok());
  EXPECT_TRUE(store->CreateRun(RunWithId("r")).ok());
  auto task = store->GetTask("h");
  ASSERT_TRUE(task.ok());
  EXPECT_TRUE(task->has_value());
}

TEST_F(SqliteStoreTest, OpeningAnExclusivelyLockedDatabaseFailsClearly) {
  MustOpen().reset();
  sqlite::Connection other = Raw();
  ASSERT_TRUE(other
                  .Exec("PRAGMA locking_mode=EXCLUSIVE; BEGIN EXCLUSIVE; "
                        "INSERT INTO tasks VALUES ('h', 'n', 'p', 's', 't'); COMMIT")
                  .ok());
  auto store = OpenStore(path_, WithBusyTimeout(50));
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.error().kind, ErrorKind::kTimeout);
  EXPECT_NE(store.error().message.find("locked"), std::string::npos);
}

TEST_F(SqliteStoreTest, MissingDirectoryIsBadInput) {
  std::string path = (dir_ / "no" / "such" / "dir" / "kforge.db").string();
  auto store = OpenStore(path);
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.error().kind, ErrorKind::kBadInput);
  EXPECT_NE(store.error().message.find("does not exist"), std::string::npos);
  EXPECT_NE(store.error().message.find((dir_ / "no" / "such" / "dir").string()), std::string::npos);
  auto directory = OpenStore(dir_.string());
  ASSERT_FALSE(directory.ok());
  EXPECT_EQ(directory.error().kind, ErrorKind::kBadInput);
}

TEST_F(SqliteStoreTest, OpenStoreAcceptsPathsAndSqliteUrls) {
  auto plain = OpenStore(path_);
  ASSERT_TRUE(plain.ok()) << plain.error().message;
  ASSERT_TRUE((*plain)->CreateRun(RunWithId("r")).ok());
  plain->reset();

  auto url = OpenStore("sqlite:" + path_);
  ASSERT_TRUE(url.ok()) << url.error().message;
  EXPECT_TRUE((*url)->GetRun("r").ok());
  url->reset();
  auto slashes = OpenStore("sqlite://" + path_);  // path_ is absolute: sqlite:///tmp/...
  ASSERT_TRUE(slashes.ok()) << slashes.error().message;
  EXPECT_TRUE((*slashes)->GetRun("r").ok());
  EXPECT_EQ((*slashes)->location(), path_);
}

TEST_F(SqliteStoreTest, OpenStoreRefusesWhatItCannotServe) {
  auto pg = OpenStore("postgresql://kforge@db.example/kforge");
  ASSERT_FALSE(pg.ok());
  EXPECT_EQ(pg.error().kind, ErrorKind::kBadInput);
  EXPECT_NE(pg.error().message.find("not built yet"), std::string::npos);
  auto other = OpenStore("mysql://db/kforge");
  ASSERT_FALSE(other.ok());
  EXPECT_EQ(other.error().kind, ErrorKind::kBadInput);
  auto empty = OpenStore("sqlite:");
  ASSERT_FALSE(empty.ok());
  EXPECT_EQ(empty.error().kind, ErrorKind::kBadInput);
  auto memory = OpenStore(":memory:");
  ASSERT_FALSE(memory.ok());
  EXPECT_EQ(memory.error().kind, ErrorKind::kBadInput);
  StoreOptions no_create;
  no_create.create_if_missing = false;
  auto absent = OpenStore(path_, no_create);
  ASSERT_FALSE(absent.ok());
  EXPECT_EQ(absent.error().kind, ErrorKind::kNotFound);
  EXPECT_FALSE(std::filesystem::exists(path_));
}

TEST(StoreConfigTest, BusyTimeoutComesFromConfig) {
  ConfigSchema schema;
  RegisterStoreConfig(schema);
  ASSERT_NE(schema.Find("store.busy_timeout_ms"), nullptr);
  Config config(schema);
  EXPECT_EQ(StoreOptionsFromConfig(config).busy_timeout_ms, 5000);
  ASSERT_TRUE(config.SetOverride("store.busy_timeout_ms=250").ok());
  EXPECT_EQ(StoreOptionsFromConfig(config).busy_timeout_ms, 250);
}

// --- crash safety ---

// The child: writes records as fast as it can and acknowledges each durable
// write on the pipe ("C <id>" candidate + job, "E <id>" evaluation). It is
// SIGKILLed at some arbitrary point; it never returns.
[[noreturn]] void WriteUntilKilled(const std::string& path, int round, int ack_fd) {
  auto opened = OpenStore(path);
  if (!opened.ok()) _exit(3);
  Store& store = **opened;
  auto ack = [&](char kind, const std::string& id) {
    std::string line = fmt::format("{} {}\n", kind, id);
    if (write(ack_fd, line.data(), line.size()) != static_cast<ssize_t>(line.size())) _exit(4);
  };
  for (int i = 0;; ++i) {
    LlmCallRecordRow call;
    call.run_id = "r";
    call.stage = "code";
    call.text = std::string(2000, 'x');  // some bulk so pages split mid-stream
    auto recorded = store.RecordLlmCall(call);
    if (!recorded.ok()) _exit(5);
    CandidateRecord cand;
    cand.run_id = "r";
    cand.source = fmt::format("round {} candidate {}", round, i);
    cand.format = "kernelbench";
    cand.iteration = i;
    cand.llm_call_id = recorded->id;
    auto added = store.AddCandidate(cand);
    if (!added.ok()) _exit(6);
    if (!store.EnqueueJob("r", added->id).ok()) _exit(7);
    ack('C', added->id);
    EventRecord e;
    e.run_id = "r";
    e.type = "tick";
    store.RecordEventAsync(e);
    EvaluationRecord ev;
    ev.candidate_id = added->id;
    ev.eval_json = R"({"accepted": true})";
    ev.accepted = true;
    ev.speedup_eager = 1.0 + i;
    ev.verdict = "ok";
    auto evaluated = store.RecordEvaluation(ev);
    if (!evaluated.ok()) _exit(8);
    ack('E', added->id);
  }
}

TEST_F(SqliteStoreTest, AcknowledgedWritesSurviveSigkill) {
  {
    auto store = MustOpen();
    ASSERT_NE(store, nullptr);
    ASSERT_TRUE(store->CreateRun(RunWithId("r")).ok());
  }  // closed before fork: no SQLite connection may cross a fork
  std::set<std::string> acked_candidates;
  std::set<std::string> acked_evaluations;
  for (int round = 0; round < 3; ++round) {
    int fds[2];
    ASSERT_EQ(pipe(fds), 0);
    fflush(nullptr);
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      close(fds[0]);
      WriteUntilKilled(path_, round, fds[1]);
    }
    close(fds[1]);
    // However this round ends, the child does not outlive it.
    struct Reaper {
      pid_t pid;
      ~Reaper() {
        if (kill(pid, SIGKILL) == 0) waitpid(pid, nullptr, 0);
      }
    } reaper{pid};
    FILE* acks = fdopen(fds[0], "r");
    ASSERT_NE(acks, nullptr);
    const int kill_after = 20 + 7 * round;  // different points in the write cycle
    int seen = 0;
    char line[256];
    while (std::fgets(line, sizeof line, acks) != nullptr) {
      std::string text(line);
      if (!text.empty() && text.back() == '\n') text.pop_back();
      ASSERT_GT(text.size(), 2u);
      (text[0] == 'C' ? acked_candidates : acked_evaluations).insert(text.substr(2));
      if (++seen == kill_after) kill(pid, SIGKILL);
    }
    std::fclose(acks);
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFSIGNALED(status)) << "child exited with " << WEXITSTATUS(status);
    EXPECT_EQ(WTERMSIG(status), SIGKILL);

    // Every acknowledged write is there, and the file is whole.
    {
      sqlite::Connection raw = Raw();
      auto integrity = raw.QueryText("PRAGMA integrity_check");
      ASSERT_TRUE(integrity.ok()) << integrity.error().message;
      EXPECT_EQ(*integrity, "ok");
      auto fk = raw.QueryText("SELECT COUNT(*) FROM pragma_foreign_key_check");
      ASSERT_TRUE(fk.ok()) << fk.error().message;
      EXPECT_EQ(*fk, "0");
    }
    auto store = MustOpen();
    ASSERT_NE(store, nullptr);
    for (const std::string& id : acked_candidates) {
      EXPECT_TRUE(store->GetCandidate(id).ok()) << "lost candidate " << id;
    }
    for (const std::string& id : acked_evaluations) {
      auto ev = store->GetEvaluation(id);
      ASSERT_TRUE(ev.ok());
      EXPECT_TRUE(ev->has_value()) << "lost evaluation " << id;
    }
    // An evaluation and the end of its job commit together: a job still open
    // belongs to a candidate without an evaluation, which resume re-runs.
    auto pending = store->PendingJobs("r");
    ASSERT_TRUE(pending.ok());
    EXPECT_LE(pending->size(), 1u);
    for (const JobRecord& job : *pending) {
      auto ev = store->GetEvaluation(job.candidate_id);
      ASSERT_TRUE(ev.ok());
      EXPECT_FALSE(ev->has_value());
      EXPECT_TRUE(store->CompleteJob(job.candidate_id).ok());
    }
    auto count = store->CountEvaluations("r");
    ASSERT_TRUE(count.ok());
    EXPECT_GE(*count, static_cast<int64_t>(acked_evaluations.size()));
  }
  EXPECT_GE(acked_evaluations.size(), 3u * 10);
}

}  // namespace
}  // namespace kforge
