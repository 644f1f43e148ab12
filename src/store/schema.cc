#include "store/schema.h"

namespace kforge {

namespace {

// Version 1: the initial schema.
constexpr const char* kMigration1 = R"sql(
CREATE TABLE tasks (
  task_hash TEXT PRIMARY KEY,
  name TEXT NOT NULL,
  path TEXT NOT NULL,
  source TEXT NOT NULL,
  created_at TEXT NOT NULL
);

CREATE TABLE baselines (
  task_hash TEXT NOT NULL,
  gpu_name TEXT NOT NULL,
  torch_version TEXT NOT NULL,
  baseline_json TEXT NOT NULL,
  created_at TEXT NOT NULL,
  PRIMARY KEY (task_hash, gpu_name, torch_version)
);

CREATE TABLE runs (
  id TEXT PRIMARY KEY,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  status TEXT NOT NULL
    CHECK (status IN ('created', 'running', 'completed', 'stopped', 'failed')),
  task_name TEXT NOT NULL,
  task_path TEXT NOT NULL,
  task_hash TEXT NOT NULL,
  strategy TEXT NOT NULL,
  llm_spec TEXT NOT NULL,
  device TEXT NOT NULL,
  config_json TEXT NOT NULL,
  iterations_target BIGINT NOT NULL,
  seed BIGINT NOT NULL,
  islands BIGINT NOT NULL
);
CREATE INDEX runs_by_created_at ON runs (created_at);

CREATE TABLE llm_calls (
  id TEXT PRIMARY KEY,
  run_id TEXT NOT NULL REFERENCES runs (id),
  seq BIGINT NOT NULL,
  stage TEXT NOT NULL,
  model_spec TEXT NOT NULL,
  request_hash TEXT NOT NULL,
  request_json TEXT NOT NULL,
  response_json TEXT NOT NULL,
  text TEXT NOT NULL,
  input_tokens BIGINT NOT NULL,
  output_tokens BIGINT NOT NULL,
  latency_ms DOUBLE PRECISION NOT NULL,
  cost_usd DOUBLE PRECISION NOT NULL,
  status TEXT NOT NULL,
  error TEXT NOT NULL,
  created_at TEXT NOT NULL,
  UNIQUE (run_id, seq)
);
CREATE INDEX llm_calls_by_request_hash ON llm_calls (request_hash);

CREATE TABLE candidates (
  id TEXT PRIMARY KEY,
  run_id TEXT NOT NULL REFERENCES runs (id),
  sha256 TEXT NOT NULL,
  source TEXT NOT NULL,
  format TEXT NOT NULL,
  island BIGINT NOT NULL,
  iteration BIGINT NOT NULL,
  llm_call_id TEXT REFERENCES llm_calls (id),
  created_at TEXT NOT NULL,
  UNIQUE (run_id, sha256)
);
CREATE INDEX candidates_by_run_iteration ON candidates (run_id, iteration);

-- A join table rather than a JSON array, so lineage queries stay plain SQL.
CREATE TABLE candidate_parents (
  candidate_id TEXT NOT NULL REFERENCES candidates (id),
  position BIGINT NOT NULL,
  parent_id TEXT NOT NULL REFERENCES candidates (id),
  PRIMARY KEY (candidate_id, position)
);
CREATE INDEX candidate_parents_by_parent ON candidate_parents (parent_id);

CREATE TABLE evaluations (
  candidate_id TEXT PRIMARY KEY REFERENCES candidates (id),
  run_id TEXT NOT NULL REFERENCES runs (id),
  eval_json TEXT NOT NULL,
  accepted BIGINT NOT NULL CHECK (accepted IN (0, 1)),
  speedup_eager DOUBLE PRECISION,
  speedup_compile DOUBLE PRECISION,
  verdict TEXT NOT NULL,
  created_at TEXT NOT NULL
);
CREATE INDEX evaluations_by_run ON evaluations (run_id);

CREATE TABLE jobs (
  candidate_id TEXT PRIMARY KEY REFERENCES candidates (id),
  run_id TEXT NOT NULL REFERENCES runs (id),
  state TEXT NOT NULL CHECK (state IN ('pending', 'leased', 'done')),
  lease_owner TEXT NOT NULL,
  lease_expires_at TEXT NOT NULL,
  attempts BIGINT NOT NULL,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE INDEX jobs_by_run_state ON jobs (run_id, state);

CREATE TABLE events (
  run_id TEXT NOT NULL REFERENCES runs (id),
  seq BIGINT NOT NULL,
  type TEXT NOT NULL,
  island BIGINT,
  iteration BIGINT,
  detail_json TEXT NOT NULL,
  created_at TEXT NOT NULL,
  PRIMARY KEY (run_id, seq)
);

CREATE TABLE ideas (
  run_id TEXT NOT NULL REFERENCES runs (id),
  idea_id TEXT NOT NULL,
  island BIGINT NOT NULL,
  parent_idea_id TEXT,
  description TEXT NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('active', 'pruned', 'rejected')),
  hypotheses_json TEXT NOT NULL,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  PRIMARY KEY (run_id, idea_id)
);
)sql";

// Version 2: benches (`kforge bench`): a suite run the same way, one run per task.
constexpr const char* kMigration2 = R"sql(
CREATE TABLE benches (
  id TEXT PRIMARY KEY,
  created_at TEXT NOT NULL,
  suite TEXT NOT NULL,
  strategy TEXT NOT NULL,
  llm_spec TEXT NOT NULL,
  device TEXT NOT NULL,
  config_json TEXT NOT NULL,
  iterations_target BIGINT NOT NULL
);

CREATE TABLE bench_runs (
  bench_id TEXT NOT NULL REFERENCES benches (id),
  task TEXT NOT NULL,
  task_path TEXT NOT NULL,
  position BIGINT NOT NULL,
  run_id TEXT NOT NULL REFERENCES runs (id),
  degenerate BIGINT NOT NULL CHECK (degenerate IN (0, 1)),
  degenerate_reason TEXT NOT NULL,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  PRIMARY KEY (bench_id, task)
);
CREATE INDEX bench_runs_by_run ON bench_runs (run_id);
)sql";

// Version 3: a search strategy's saved state (pacevolve: idea pools, islands,
// momentum), one row per run, replaced as the run goes on, so a resumed run
// continues the search it had rather than one rebuilt from evaluations alone.
constexpr const char* kMigration3 = R"sql(
CREATE TABLE strategy_states (
  run_id TEXT PRIMARY KEY REFERENCES runs (id),
  state_json TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
)sql";

// Version 4: the knowledge base (KernelBlaster), one document per GPU
// architecture, shared by every run on that architecture.
constexpr const char* kMigration4 = R"sql(
CREATE TABLE knowledge_bases (
  arch TEXT PRIMARY KEY,
  kb_json TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
)sql";

}  // namespace

const std::vector<std::string>& StoreMigrations() {
  static const std::vector<std::string> migrations = {kMigration1, kMigration2, kMigration3,
                                                      kMigration4};
  return migrations;
}

int StoreSchemaVersion() {
  return static_cast<int>(StoreMigrations().size());
}

}  // namespace kforge
