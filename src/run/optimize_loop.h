// The optimize loop (ARCHITECTURE.md, "Process model"): the thread that calls
// Run() is the scheduler. It owns the run's state and makes every store
// write except the LLM call records (the session writes those, durably,
// before an answer is used). LLM proposals run on their own threads, at most
// LoopOptions::max_in_flight at once counting candidates still waiting for
// a worker; evaluations run on the backend's workers. So the model is asked
// for the next candidates while the current one is measured.
//
// Write intent before acting: a candidate is added (unique by sha256 in the
// run) and its evaluation job enqueued before the evaluation starts; the
// evaluation record closes the job. On Run() the loop first rebuilds from
// the store: every recorded evaluation is replayed through
// Strategy::Observe() in iteration order (live observations are delivered
// in the same order), and candidates without an evaluation are evaluated
// first. The run ends with exactly `iterations` evaluations unless it stops.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <filesystem>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <variant>

#include "common/result.h"
#include "run/agent_proposal.h"
#include "run/evaluation_backend.h"
#include "run/model_client.h"
#include "run/progress.h"
#include "run/run_config.h"
#include "run/run_knowledge.h"
#include "run/stop_request.h"
#include "search/strategy.h"
#include "store/store.h"

namespace kforge::run {

struct LoopOutcome {
  RunStatus status = RunStatus::kCompleted;  // completed | stopped | failed
  std::string reason;                        // why it stopped or failed; empty when completed
  std::optional<Error> error;                // failed: what failed (its kind picks the exit code)
  int64_t evaluations = 0;                   // recorded in the run
  // Work was abandoned in flight (a second stop request): the caller should
  // exit without waiting for it; resume redoes it.
  bool abandoned = false;
};

struct LoopContext {
  std::string run_id;
  std::string candidate_format;  // recorded with each candidate
  bool resumed = false;          // run_resumed instead of run_started
  // The knowledge base's part in the run (run_knowledge.h); null: not used.
  RunKnowledge* knowledge = nullptr;
  // Where agent episodes get their workspaces (empty: the system's temp dir).
  std::filesystem::path work_dir = {};
  // Nsight Compute for an agent's `profile` tool: a draft the check accepted
  // is profiled on the check's worker thread, right after its evaluation
  // (empty: no ncu summary, as on the CPU or with kb.profile off).
  std::function<ProfileResult(const ProfileJob& job)> draft_profiler = {};
};

class OptimizeLoop {
 public:
  OptimizeLoop(Store& store, LoopContext context, search::Strategy& strategy, ModelClient& model,
               EvaluationBackend& backend, LoopOptions options, const StopRequest& stop,
               ProgressReporter& progress);
  // Waits for threads still running (an abandoned run's caller exits first).
  ~OptimizeLoop();
  OptimizeLoop(const OptimizeLoop&) = delete;
  OptimizeLoop& operator=(const OptimizeLoop&) = delete;

  // Runs until the run has `options.iterations` evaluations or stops. The
  // final status and a completed/stopped/failed event are recorded.
  // An error only when the store itself fails at the start.
  Result<LoopOutcome> Run();

 private:
  struct ProposalDone {
    search::Proposal proposal;
    ProposalAnswer answer;
  };
  // An agent's tool wants a draft checked: the scheduler runs it on a free
  // worker before waiting candidates (a model is waiting for the answer).
  struct CheckRequested {
    EvaluationRequest request;
    std::shared_ptr<std::promise<Result<nlohmann::json>>> reply;
  };
  struct CheckDone {
    int worker = 0;
  };
  struct EvaluationDone {
    int worker = 0;
    std::string candidate_id;
    std::optional<Error> error;
    nlohmann::json result;
  };
  struct KnowledgeStagesDone {
    uint64_t thread = 0;
    KnowledgeUpdate update;
    StageReplies replies;
  };
  struct ProfileDone {
    uint64_t thread = 0;
    ProfileResult result;
  };
  using Message = std::variant<ProposalDone, EvaluationDone, KnowledgeStagesDone, ProfileDone,
                               CheckRequested, CheckDone>;

  // Messages from the proposal and evaluation threads to the scheduler.
  // Shared, so a thread still running after an abandoned Run() posts safely.
  class Mailbox {
   public:
    void Post(Message message);
    std::optional<Message> Pop(std::chrono::steady_clock::time_point deadline);

   private:
    std::mutex mu_;
    std::condition_variable cv_;
    std::deque<Message> messages_;
  };

  enum class Cause { kNone, kSignal, kBudget, kUnusable, kReplayDone, kFatal };

  Status Rebuild();
  Status Begin();
  void LaunchProposals();
  void DispatchEvaluations();
  bool Finished();
  void Handle(ProposalDone done);
  struct NewCandidate {
    std::string id;
    int64_t iteration = 0;
  };
  // The candidate the proposal gave, if it gave one (its code and value are
  // moved out of `done`).
  std::optional<NewCandidate> HandleProposal(ProposalDone& done);
  // An agent proposal's trajectory as an `agent_episode` event.
  void RecordAgentEpisode(ProposalDone& done, const std::optional<NewCandidate>& candidate);
  void Handle(CheckRequested check);
  void Handle(CheckDone done);
  void StartCheck(int worker);
  // Pending checks are answered "not run" once the run is stopping.
  void RefuseChecks();
  // What an agent episode's checks go through (a proposal thread calls it).
  CheckSubmit MakeCheckSubmit();
  void Handle(EvaluationDone done);
  void Handle(KnowledgeStagesDone done);
  void Handle(ProfileDone done);
  // The textual-gradient stages on a thread (or the update at once without
  // them). Skipped once the run is interrupted or failed: resume does it.
  void StartKnowledgeUpdate(KnowledgeUpdate update);
  void ApplyKnowledgeUpdate(const KnowledgeUpdate& update, const StageReplies& replies);
  // ncu gets the GPU only while no evaluation runs. True when a profile started.
  bool StartProfile();
  void Unusable(const search::Proposal& proposal, const std::string& reason);
  void Stop(Cause cause, std::string reason);
  void Fail(Error error);
  void DeliverObservations();
  // Records the strategy's events and saves its state (when it keeps one).
  Status SyncStrategy();
  ProgressSnapshot Snapshot() const;
  Status Finish(LoopOutcome& outcome);
  void JoinThread(std::map<uint64_t, std::thread>& threads, uint64_t key);

  Store& store_;
  LoopContext context_;
  search::Strategy& strategy_;
  ModelClient& model_;
  EvaluationBackend& backend_;
  LoopOptions options_;
  const StopRequest& stop_;
  ProgressReporter& progress_;
  std::shared_ptr<Mailbox> mailbox_ = std::make_shared<Mailbox>();

  // Run state (scheduler thread only).
  std::set<std::string> known_sha_;
  int64_t recorded_ = 0;        // candidates in the run
  int64_t next_iteration_ = 0;  // the next candidate's iteration
  int64_t evaluations_ = 0;     // evaluations recorded in the run
  int64_t session_evaluations_ = 0;
  std::map<std::string, CandidateRecord> unevaluated_;  // by candidate id
  std::deque<std::string> queue_;                       // waiting for a worker, by iteration
  std::map<int, std::string> evaluating_;               // worker -> candidate id
  std::deque<CheckRequested> checks_;                   // agent checks waiting for a worker
  std::set<int> checking_;                              // workers running a check
  // Set once the run stops or fails: agent episodes make no further turn.
  std::shared_ptr<std::atomic<bool>> stopping_ = std::make_shared<std::atomic<bool>>(false);
  // Set when Run() returns: a check asked later is refused, not awaited.
  std::shared_ptr<std::atomic<bool>> closed_ = std::make_shared<std::atomic<bool>>(false);
  // Observations waiting for every earlier iteration (nullopt: not evaluated yet).
  std::map<int64_t, std::optional<search::Observation>> awaiting_;
  int proposing_ = 0;
  int unusable_streak_ = 0;
  int calls_since_candidate_ = 0;  // LLM calls answered since the last new candidate
  std::optional<double> best_speedup_;
  Cause cause_ = Cause::kNone;
  std::string reason_;
  std::optional<Error> error_;
  std::chrono::steady_clock::time_point started_;

  std::map<uint64_t, std::thread> proposal_threads_;    // by proposal id
  std::map<uint64_t, std::thread> evaluation_threads_;  // by worker
  // Knowledge-base stages and profiles in flight.
  std::map<uint64_t, std::thread> knowledge_threads_;
  uint64_t next_knowledge_thread_ = 1;
  int knowledge_updates_ = 0;
  bool profiling_ = false;
  std::vector<KnowledgeUpdate> rebuilt_updates_;  // evaluated before a resume, not yet applied
};

}  // namespace kforge::run
