// Strategy: what a search algorithm is to the optimize loop (src/run). The
// loop asks it what to send to the model (Propose), tells it what became of
// each proposal (Settle), and hands it every finished evaluation (Observe).
//
// Resumability contract: a strategy's decisions are a deterministic function
// of its seed and the sequence of observations it was given. The loop
// delivers observations in iteration order, live and on resume alike, and on
// resume rebuilds the strategy by replaying every recorded evaluation through
// Observe() before it asks for anything. Settle() may keep bookkeeping for
// proposals in flight but must not change later decisions (a resumed run has
// no record of proposals that never became candidates). A strategy whose
// state also depends on non-code replies (pacevolve: ideas, selections,
// summaries) keeps that state serialisable instead (PacEvolveSearch::ToJson)
// and is restored from its last snapshot; see src/run/README.md.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/result.h"
#include "llm/prompt.h"
#include "llm/types.h"

namespace kforge::search {

// One integrity flag of an evaluation (CONTRACT: check, severity, detail).
struct IntegrityNote {
  std::string check;
  std::string severity;  // reject | warn | ...
  std::string detail;
};

// What a strategy learns from one evaluation: the fields of the contract's
// `kforge eval --json` object that feedback and selection use.
struct EvalSummary {
  bool compiled = false;
  bool correct = false;
  bool accepted = false;
  bool degenerate = false;
  std::string verdict;  // ok | suspect | rejected
  std::string compile_log;
  int trials = 0;
  double max_abs_err = 0;
  double max_rel_err = 0;
  std::optional<std::string> correctness_detail;
  std::optional<double> candidate_ms;  // medians; candidate_ms null unless accepted for timing
  std::optional<double> eager_ms;
  std::optional<double> sol_floor_ms;  // the task's speed-of-light floor on this device
  std::optional<double> compile_ms;
  std::optional<double> speedup_eager;
  std::optional<double> speedup_compile;
  std::vector<IntegrityNote> flags;
  std::optional<std::string> error;
  int milestone = -1;
  std::string device_name;

  // From the contract JSON (missing fields keep their defaults; a value of
  // the wrong type is kBadInput).
  static Result<EvalSummary> FromContractJson(const nlohmann::json& eval);
};

// One finished evaluation, as the strategy sees it.
struct Observation {
  std::string candidate_id;
  std::string source;
  int64_t iteration = 0;  // 0-based order in which candidates went to evaluation
  int island = 0;
  std::vector<std::string> parent_ids;
  EvalSummary eval;
};

enum class ReplyKind {
  kCode,        // plain text; the last fenced code block is the candidate
  kStructured,  // a JSON value valid against `schema`
  kAgent,       // a tool-using episode (`agent`); the submitted file is the candidate
};

// An agent episode (CUDA Agent's loop, src/agent): the prompt's system
// sections are its skill, the rest its first user message.
struct AgentSpec {
  std::string candidate_file;  // the file the checks and submit read
  std::string initial_source;  // written to it before the first turn (may be empty)
  int max_turns = 24;
  int64_t max_tokens = 400000;
};

// What to ask the model next.
struct Proposal {
  uint64_t id = 0;     // unique among this strategy object's proposals
  std::string stage;   // LLM stage name (recorded; picks llm.stage.<stage>)
  llm::Prompt prompt;  // fitted to the model's window by the session
  ReplyKind kind = ReplyKind::kCode;
  std::vector<std::string> code_langs = {"python"};  // preferred fence languages
  std::optional<llm::OutputSchema> schema;           // kStructured only
  std::optional<AgentSpec> agent;                    // kAgent only
  std::vector<std::string> parent_ids;               // candidates the answer builds on (lineage)
  int island = 0;
};

// What became of a proposal.
struct ProposalOutcome {
  enum class Kind {
    kSubmitted,   // a candidate went to evaluation
    kStructured,  // a structured reply arrived (value)
    kFailed,      // the call failed, the reply was unusable, or the code was a duplicate
  };
  Kind kind = Kind::kFailed;
  std::string candidate_id;  // kSubmitted
  int64_t iteration = 0;     // kSubmitted
  nlohmann::json value;      // kStructured
  std::string reason;        // kFailed
};

// One entry for the run's event log.
struct StrategyEvent {
  std::string type;
  int island = 0;
  int64_t iteration = 0;
  nlohmann::json detail = nlohmann::json::object();
};

// What every strategy is told at creation.
struct StrategyContext {
  std::string task_name;
  std::string task_source;
  std::string device;    // cuda | cpu (resolved)
  std::string hardware;  // e.g. "NVIDIA H100 80GB HBM3" or "x86_64 CPU, 16 cores"
  std::string format;    // candidate format: kernelbench | cpp
  std::string policy;    // strict | any
  uint64_t seed = 0;
  int islands = 1;
};

class Strategy {
 public:
  virtual ~Strategy() = default;

  virtual std::string name() const = 0;
  // The next request, or nullopt when the strategy must see an observation
  // (or a settled proposal) before it can ask anything more. The loop calls
  // it whenever it has room for another call in flight.
  virtual std::optional<Proposal> Propose() = 0;
  // Once per proposal, when the loop knows what became of it.
  virtual void Settle(uint64_t proposal_id, const ProposalOutcome& outcome) = 0;
  // A finished evaluation; delivered in iteration order.
  virtual void Observe(const Observation& observation) = 0;

  // Events for the run's log (CONTRACT event types: backtrack, crossover,
  // idea_added, ...), drained by the loop after every Settle and Observe.
  virtual std::vector<StrategyEvent> DrainEvents() { return {}; }

  // Persistence, for strategies whose decisions depend on more than the
  // evaluations (pacevolve: ideas, selections, summaries). The loop saves
  // SaveState() after every Settle and Observe, and on resume calls
  // RestoreState() with the last saved state before it replays the recorded
  // evaluations through Observe(); such a strategy ignores observations its
  // state already holds. nullopt: the strategy is rebuilt from evaluations.
  virtual std::optional<nlohmann::json> SaveState() const { return std::nullopt; }
  virtual Status RestoreState(const nlohmann::json& /*state*/) {
    return Error::BadInput("strategy '" + name() + "' has no saved state to restore");
  }
};

}  // namespace kforge::search
