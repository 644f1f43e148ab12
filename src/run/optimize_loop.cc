#include "run/optimize_loop.h"

#include <fmt/format.h>

#include <algorithm>
#include <exception>

#include "common/hash.h"
#include "kb/textual_gradient.h"
#include "llm/types.h"
#include "run/evaluation_records.h"

namespace kforge::run {

namespace {

using Clock = std::chrono::steady_clock;
using nlohmann::json;

// How often the scheduler looks at the stop request when nothing happens.
constexpr auto kPollInterval = std::chrono::milliseconds(200);
constexpr size_t kShortId = 8;

// LLM failures that another proposal will not fix: the run fails.
bool IsFatal(llm::LlmErrorKind kind) {
  using K = llm::LlmErrorKind;
  switch (kind) {
    case K::kBadSpec:
    case K::kAuth:
    case K::kBadRequest:
    case K::kTls:
    case K::kContextOverflow:
    case K::kReplayDivergence:
    case K::kRecording:
      return true;
    default:
      return false;
  }
}

std::string Short(const std::string& id) {
  return id.substr(0, kShortId);
}

std::string Verdict(const json& eval) {
  if (!eval.value("compiled", false)) return "did not compile or load";
  const json& integrity = eval.contains("integrity") ? eval["integrity"] : json::object();
  if (integrity.value("verdict", "ok") == "rejected") {
    std::string checks;
    for (const json& f : integrity.value("flags", json::array())) {
      if (f.value("severity", "") != "reject") continue;
      checks += (checks.empty() ? "" : ",") + f.value("check", "?");
    }
    return "rejected (" + checks + ")";
  }
  if (!eval.value("correct", false)) return "wrong output";
  if (!eval.value("accepted", false)) return "not accepted";
  std::string out = "correct";
  if (auto it = eval.find("speedup"); it != eval.end() && it->is_object()) {
    if (auto e = it->find("eager"); e != it->end() && e->is_number()) {
      out += fmt::format(", {:.2f}x eager", e->get<double>());
    }
    if (auto c = it->find("compile"); c != it->end() && c->is_number()) {
      out += fmt::format(", {:.2f}x compile", c->get<double>());
    }
  }
  if (integrity.value("verdict", "ok") == "suspect") out += " [suspect]";
  return out;
}

// What the agent's profile tool says of a draft's Nsight Compute profile.
json DraftProfileJson(const ProfileResult& p) {
  if (!p.error.empty() || !p.state) {
    return {{"error", p.error.empty() ? "the profile named no kernel state" : p.error}};
  }
  return {{"state", p.state->state}, {"text", ProfileResultText(p)}};
}

}  // namespace

void OptimizeLoop::Mailbox::Post(Message message) {
  {
    std::lock_guard lock(mu_);
    messages_.push_back(std::move(message));
  }
  cv_.notify_one();
}

std::optional<OptimizeLoop::Message> OptimizeLoop::Mailbox::Pop(Clock::time_point deadline) {
  std::unique_lock lock(mu_);
  cv_.wait_until(lock, deadline, [&] { return !messages_.empty(); });
  if (messages_.empty()) return std::nullopt;
  Message m = std::move(messages_.front());
  messages_.pop_front();
  return m;
}

OptimizeLoop::OptimizeLoop(Store& store, LoopContext context, search::Strategy& strategy,
                           ModelClient& model, EvaluationBackend& backend, LoopOptions options,
                           const StopRequest& stop, ProgressReporter& progress)
    : store_(store),
      context_(std::move(context)),
      strategy_(strategy),
      model_(model),
      backend_(backend),
      options_(options),
      stop_(stop),
      progress_(progress) {}

OptimizeLoop::~OptimizeLoop() {
  for (auto& [id, t] : proposal_threads_) {
    if (t.joinable()) t.join();
  }
  for (auto& [id, t] : evaluation_threads_) {
    if (t.joinable()) t.join();
  }
  for (auto& [id, t] : knowledge_threads_) {
    if (t.joinable()) t.join();
  }
}

void OptimizeLoop::JoinThread(std::map<uint64_t, std::thread>& threads, uint64_t key) {
  auto it = threads.find(key);
  if (it == threads.end()) return;
  if (it->second.joinable()) it->second.join();
  threads.erase(it);
}

Status OptimizeLoop::Rebuild() {
  auto candidates = store_.CandidatesOfRun(context_.run_id);
  if (!candidates) return candidates.error();
  auto evaluations = store_.EvaluationsOfRun(context_.run_id);
  if (!evaluations) return evaluations.error();
  std::map<std::string, const EvaluationRecord*> eval_of;
  for (const EvaluatedCandidate& e : *evaluations) eval_of[e.candidate.id] = &e.evaluation;
  RunKnowledge* knowledge = context_.knowledge;
  if (knowledge != nullptr) {
    // Which candidates named a technique, and whose update is already applied.
    auto events = store_.EventsOfRun(context_.run_id);
    if (!events) return events.error();
    knowledge->Rebuild(*events);
  }

  std::vector<CandidateRecord> ordered = std::move(candidates).value();
  std::stable_sort(
      ordered.begin(), ordered.end(),
      [](const CandidateRecord& a, const CandidateRecord& b) { return a.iteration < b.iteration; });
  for (CandidateRecord& c : ordered) {
    known_sha_.insert(c.sha256);
    ++recorded_;
    next_iteration_ = std::max(next_iteration_, c.iteration + 1);
    auto it = eval_of.find(c.id);
    if (it != eval_of.end()) {
      auto observation = MakeObservation(c, it->second->eval_json);
      if (!observation) return observation.error();
      awaiting_[c.iteration] = std::move(observation).value();
      ++evaluations_;
      const EvaluationRecord& e = *it->second;
      if (knowledge != nullptr) {
        knowledge->NoteEvaluation(c, e, /*live=*/false);
        // Evaluated before the stop but not learned from yet: do it now, once.
        if (auto update = knowledge->UpdateFor(c, e)) rebuilt_updates_.push_back(*update);
      }
      if (e.accepted && e.verdict == "ok" && e.speedup_eager &&
          (!best_speedup_ || *e.speedup_eager > *best_speedup_)) {
        best_speedup_ = e.speedup_eager;
      }
      continue;
    }
    // Recorded but never evaluated (killed in between): evaluate it first.
    auto enqueued = store_.EnqueueJob(context_.run_id, c.id);
    if (!enqueued) return enqueued.error();
    awaiting_[c.iteration] = std::nullopt;
    queue_.push_back(c.id);
    backend_.Prepare({c.id, c.iteration, c.source, c.sha256});  // builds may start now
    unevaluated_[c.id] = std::move(c);
  }
  // A strategy that saves its state continues from the last one saved; it
  // ignores the recorded evaluations that state already holds.
  auto saved = store_.GetStrategyState(context_.run_id);
  if (!saved) return saved.error();
  if (saved->has_value()) {
    json state = json::parse(**saved, nullptr, /*allow_exceptions=*/false);
    if (state.is_discarded()) {
      return Error::BadInput(
          fmt::format("run {}: the saved strategy state is not valid JSON", context_.run_id));
    }
    if (Status st = strategy_.RestoreState(state); !st) return st;
  }
  // The strategy sees every recorded evaluation, in iteration order.
  DeliverObservations();
  return SyncStrategy();
}

Status OptimizeLoop::SyncStrategy() {
  for (search::StrategyEvent& e : strategy_.DrainEvents()) {
    EventRecord event;
    event.run_id = context_.run_id;
    event.type = std::move(e.type);
    event.island = e.island;
    event.iteration = e.iteration;
    event.detail_json = llm::DumpJson(e.detail);
    store_.RecordEventAsync(std::move(event));
  }
  std::optional<json> state = strategy_.SaveState();
  if (!state) return Status::Ok();
  return store_.PutStrategyState(context_.run_id, llm::DumpJson(*state));
}

Status OptimizeLoop::Begin() {
  if (Status st = store_.SetRunStatus(context_.run_id, RunStatus::kRunning); !st) return st;
  EventRecord event;
  event.run_id = context_.run_id;
  event.type = context_.resumed ? "run_resumed" : "run_started";
  event.detail_json = llm::DumpJson({{"evaluations", evaluations_},
                                     {"candidates", recorded_},
                                     {"pending", static_cast<int64_t>(queue_.size())},
                                     {"target", options_.iterations},
                                     {"workers", backend_.workers()},
                                     {"evaluator", backend_.Describe()}});
  auto seq = store_.RecordEvent(event);
  if (!seq) return seq.error();
  return Status::Ok();
}

void OptimizeLoop::DeliverObservations() {
  while (!awaiting_.empty() && awaiting_.begin()->second.has_value()) {
    strategy_.Observe(*awaiting_.begin()->second);
    awaiting_.erase(awaiting_.begin());
  }
}

void OptimizeLoop::Stop(Cause cause, std::string reason) {
  if (cause_ != Cause::kNone) return;
  cause_ = cause;
  reason_ = std::move(reason);
  stopping_->store(true);
  progress_.Event("stopping: " + reason_, Snapshot());
}

void OptimizeLoop::Fail(Error error) {
  if (cause_ == Cause::kFatal) return;
  cause_ = Cause::kFatal;
  stopping_->store(true);
  reason_ = error.message;
  error_ = std::move(error);
}

void OptimizeLoop::LaunchProposals() {
  while (proposing_ + static_cast<int>(queue_.size()) < options_.max_in_flight &&
         recorded_ + proposing_ < options_.iterations) {
    std::optional<search::Proposal> proposal = strategy_.Propose();
    if (!proposal) return;
    // The slot is the iteration the answer's candidate would get.
    if (context_.knowledge != nullptr)
      context_.knowledge->Decorate(*proposal, recorded_ + proposing_);
    ++proposing_;
    uint64_t id = proposal->id;
    auto mailbox = mailbox_;
    ModelClient& model = model_;
    CheckSubmit submit = proposal->kind == search::ReplyKind::kAgent ? MakeCheckSubmit() : nullptr;
    const bool native = context_.candidate_format == "native";
    std::filesystem::path work_root = context_.work_dir.empty()
                                          ? std::filesystem::temp_directory_path() / "kforge-agent"
                                          : context_.work_dir;
    std::shared_ptr<const std::atomic<bool>> stopping = stopping_;
    proposal_threads_[id] = std::thread([mailbox, &model, submit = std::move(submit), native,
                                         work_root = std::move(work_root), stopping,
                                         p = std::move(*proposal)]() mutable {
      ProposalDone done;
      try {
        ProposalAnswer& a = done.answer;
        if (p.kind == search::ReplyKind::kAgent) {
          a = RunAgentProposal(model, p, native, std::move(submit), work_root, stopping);
        } else if (p.kind == search::ReplyKind::kStructured && p.schema) {
          auto reply = model.AskStructured(p.stage, p.prompt, *p.schema);
          if (reply) {
            a.value = std::move(reply->value);
            a.llm_call_id = reply->response.call_id;
          } else {
            a.error = reply.error();
          }
        } else {
          auto reply = model.AskForCode(p.stage, p.prompt, p.code_langs);
          if (reply) {
            a.code = std::move(reply->code.code);
            a.reply_text = std::move(reply->response.text);
            a.llm_call_id = reply->response.call_id;
          } else {
            a.error = reply.error();
          }
        }
      } catch (const std::exception& e) {
        done.answer.error = llm::LlmError::Make(llm::LlmErrorKind::kRecording,
                                                fmt::format("proposal failed: {}", e.what()));
      }
      done.proposal = std::move(p);
      mailbox->Post(std::move(done));
    });
  }
}

void OptimizeLoop::DispatchEvaluations() {
  if (cause_ != Cause::kNone) RefuseChecks();
  if (cause_ == Cause::kSignal || cause_ == Cause::kFatal) return;
  if (profiling_ || StartProfile()) return;  // ncu has the GPU
  // A profile waits for every worker to be idle: dispatch no more meanwhile.
  if (context_.knowledge != nullptr && context_.knowledge->HasProfileJob() &&
      (!evaluating_.empty() || !checking_.empty()) && cause_ == Cause::kNone) {
    return;
  }
  for (int worker = 0; worker < backend_.workers() && (!queue_.empty() || !checks_.empty());
       ++worker) {
    if (evaluating_.count(worker) > 0 || checking_.count(worker) > 0) continue;
    if (!checks_.empty()) {
      StartCheck(worker);
      continue;
    }
    std::string candidate_id = queue_.front();
    queue_.pop_front();
    const CandidateRecord& c = unevaluated_.at(candidate_id);
    EvaluationRequest request{c.id, c.iteration, c.source, c.sha256,
                              context_.candidate_format == "native"};
    evaluating_[worker] = candidate_id;
    auto mailbox = mailbox_;
    EvaluationBackend& backend = backend_;
    evaluation_threads_[static_cast<uint64_t>(worker)] =
        std::thread([mailbox, &backend, worker, request = std::move(request)] {
          EvaluationDone done;
          done.worker = worker;
          done.candidate_id = request.candidate_id;
          try {
            auto result = backend.Evaluate(worker, request);
            if (result) {
              done.result = std::move(result).value();
            } else {
              done.error = result.error();
            }
          } catch (const std::exception& e) {
            done.error = Error::Internal(fmt::format("evaluation of candidate {} failed: {}",
                                                     request.candidate_id, e.what()));
          }
          mailbox->Post(std::move(done));
        });
  }
}

bool OptimizeLoop::Finished() {
  if (proposing_ > 0 || !evaluating_.empty() || !checking_.empty() || knowledge_updates_ > 0 ||
      profiling_) {
    return false;
  }
  bool evaluations_stopped = cause_ == Cause::kSignal || cause_ == Cause::kFatal;
  if (!queue_.empty() && !evaluations_stopped) return false;
  if (context_.knowledge != nullptr) {
    // Profiles still queued are for prompts no longer coming; their updates go ahead without.
    std::vector<KnowledgeUpdate> waiting = context_.knowledge->DropProfiles();
    for (KnowledgeUpdate& u : waiting) StartKnowledgeUpdate(std::move(u));
    if (knowledge_updates_ > 0) return false;
  }
  if (cause_ != Cause::kNone) return true;
  if (evaluations_ >= options_.iterations) return true;
  // Nothing in flight, nothing queued, and still short of the target: only
  // a strategy that waits for nothing gets here. Fail rather than hang.
  Fail(Error::Internal(fmt::format(
      "strategy '{}' has nothing to propose with nothing in flight ({} of {} evaluations)",
      strategy_.name(), evaluations_, options_.iterations)));
  return true;
}

void OptimizeLoop::Unusable(const search::Proposal& proposal, const std::string& reason) {
  ++unusable_streak_;
  EventRecord event;
  event.run_id = context_.run_id;
  event.type = "proposal_unusable";
  event.island = proposal.island;
  event.iteration = next_iteration_;
  event.detail_json = llm::DumpJson({{"stage", proposal.stage}, {"reason", reason}});
  store_.RecordEventAsync(std::move(event));
  strategy_.Settle(proposal.id, {search::ProposalOutcome::Kind::kFailed, "", 0, {}, reason});
  progress_.Event(fmt::format("proposal gave no new candidate: {}", reason), Snapshot());
  if (unusable_streak_ >= options_.max_unusable_proposals) {
    Stop(Cause::kUnusable,
         fmt::format("{} proposals in a row gave no new candidate (last: {}); see "
                     "run.max_unusable_proposals",
                     unusable_streak_, reason));
  }
}

void OptimizeLoop::Handle(ProposalDone done) {
  --proposing_;
  JoinThread(proposal_threads_, done.proposal.id);
  uint64_t proposal_id = done.proposal.id;
  std::optional<NewCandidate> candidate = HandleProposal(done);
  if (done.proposal.kind == search::ReplyKind::kAgent) RecordAgentEpisode(done, candidate);
  if (context_.knowledge != nullptr) context_.knowledge->Forget(proposal_id);
  if (calls_since_candidate_ >= options_.max_calls_per_candidate) {
    Stop(Cause::kUnusable, fmt::format("{} LLM calls in a row produced no new candidate; see "
                                       "run.max_calls_per_candidate",
                                       calls_since_candidate_));
  }
}

std::optional<OptimizeLoop::NewCandidate> OptimizeLoop::HandleProposal(ProposalDone& done) {
  ++calls_since_candidate_;
  const search::Proposal& p = done.proposal;
  ProposalAnswer& a = done.answer;
  using Kind = search::ProposalOutcome::Kind;
  if (a.interrupted) {  // the run's stop ended the episode: nothing went wrong with it
    strategy_.Settle(p.id, {Kind::kFailed, "", 0, {}, a.end_reason});
    return std::nullopt;
  }
  if (a.error) {
    const llm::LlmError& e = *a.error;
    if (e.kind == llm::LlmErrorKind::kBudgetExhausted) {
      strategy_.Settle(p.id, {Kind::kFailed, "", 0, {}, e.Describe()});
      Stop(Cause::kBudget, "LLM budget reached (" + e.message + ")");
      return std::nullopt;
    }
    if (e.kind == llm::LlmErrorKind::kReplayExhausted) {
      strategy_.Settle(p.id, {Kind::kFailed, "", 0, {}, e.Describe()});
      Stop(Cause::kReplayDone, "the replayed run has no more recorded answers");
      return std::nullopt;
    }
    if (IsFatal(e.kind)) {
      strategy_.Settle(p.id, {Kind::kFailed, "", 0, {}, e.Describe()});
      Fail(e.ToError());
      return std::nullopt;
    }
    Unusable(p, e.Describe());
    return std::nullopt;
  }
  if (p.kind == search::ReplyKind::kAgent && a.code.empty()) {
    Unusable(p, a.end_reason);
    return std::nullopt;
  }
  if (p.kind == search::ReplyKind::kStructured) {
    unusable_streak_ = 0;
    strategy_.Settle(p.id, {Kind::kStructured, "", 0, std::move(a.value), ""});
    return std::nullopt;
  }
  std::string sha = Sha256Hex(a.code);
  if (known_sha_.count(sha) > 0) {
    Unusable(p, "the code is identical to an earlier candidate of this run");
    return std::nullopt;
  }
  if (recorded_ >= options_.iterations) {
    strategy_.Settle(p.id, {Kind::kFailed, "", 0, {}, "the run has all its candidates"});
    return std::nullopt;
  }
  CandidateRecord c;
  c.run_id = context_.run_id;
  c.sha256 = sha;
  c.source = std::move(a.code);
  c.format = context_.candidate_format;
  c.parent_ids = p.parent_ids;
  c.island = p.island;
  c.iteration = next_iteration_;
  c.llm_call_id = a.llm_call_id;
  auto inserted = store_.AddCandidate(c);
  if (!inserted) {
    Fail(inserted.error());
    return std::nullopt;
  }
  c.id = inserted->id;
  if (!inserted->inserted) {  // cannot happen with one scheduler; never evaluate twice
    known_sha_.insert(sha);
    Unusable(p, "the code is identical to an earlier candidate of this run");
    return std::nullopt;
  }
  auto enqueued = store_.EnqueueJob(context_.run_id, c.id);
  if (!enqueued) {
    Fail(enqueued.error());
    return std::nullopt;
  }
  known_sha_.insert(sha);
  ++recorded_;
  ++next_iteration_;
  unusable_streak_ = 0;
  calls_since_candidate_ = 0;
  awaiting_[c.iteration] = std::nullopt;
  queue_.push_back(c.id);
  backend_.Prepare({c.id, c.iteration, c.source, c.sha256});  // builds may start now
  strategy_.Settle(p.id, {Kind::kSubmitted, c.id, c.iteration, {}, ""});
  if (context_.knowledge != nullptr) {
    // Durable: a resumed run must know which technique this candidate applied.
    if (auto event = context_.knowledge->OnCandidate(p, c, a.reply_text)) {
      if (auto seq = store_.RecordEvent(*event); !seq) Fail(seq.error());
    }
  }
  NewCandidate added{c.id, c.iteration};
  unevaluated_[c.id] = std::move(c);
  return added;
}

void OptimizeLoop::RecordAgentEpisode(ProposalDone& done,
                                      const std::optional<NewCandidate>& candidate) {
  const search::Proposal& proposal = done.proposal;
  json& trajectory = done.answer.trajectory;
  if (!trajectory.is_object()) return;  // the episode never ran (no workspace)
  trajectory["stage"] = proposal.stage;
  trajectory["parent_ids"] = proposal.parent_ids;
  trajectory["candidate_id"] = candidate ? json(candidate->id) : json(nullptr);
  if (!done.answer.end_reason.empty()) trajectory["reason"] = done.answer.end_reason;
  EventRecord event;
  event.run_id = context_.run_id;
  event.type = "agent_episode";
  event.island = proposal.island;
  // An episode without a candidate belongs to the iteration its candidate would have had.
  event.iteration = candidate ? candidate->iteration : next_iteration_;
  event.detail_json = llm::DumpJson(trajectory);
  // Durable: RL exports read a candidate's trajectory counts from it.
  if (auto seq = store_.RecordEvent(event); !seq) Fail(seq.error());
}

CheckSubmit OptimizeLoop::MakeCheckSubmit() {
  return [mailbox = mailbox_, closed = closed_](EvaluationRequest request) -> Result<json> {
    constexpr auto kWait = std::chrono::milliseconds(200);
    if (closed->load()) return Error::Internal("the run has ended");
    auto reply = std::make_shared<std::promise<Result<json>>>();
    std::future<Result<json>> answer = reply->get_future();
    mailbox->Post(CheckRequested{std::move(request), reply});
    while (answer.wait_for(kWait) != std::future_status::ready) {
      if (closed->load()) return Error::Internal("the run has ended");
    }
    return answer.get();
  };
}

void OptimizeLoop::Handle(CheckRequested check) {
  checks_.push_back(std::move(check));
  if (cause_ != Cause::kNone) RefuseChecks();
}

void OptimizeLoop::RefuseChecks() {
  for (CheckRequested& c : checks_) {
    c.reply->set_value(Error::Internal("the run is stopping (" + reason_ + ")"));
  }
  checks_.clear();
}

void OptimizeLoop::StartCheck(int worker) {
  CheckRequested check = std::move(checks_.front());
  checks_.pop_front();
  checking_.insert(worker);
  auto mailbox = mailbox_;
  EvaluationBackend& backend = backend_;
  std::function<ProfileResult(const ProfileJob&)> profiler;
  if (check.request.depth == EvalDepth::kFull) profiler = context_.draft_profiler;
  evaluation_threads_[static_cast<uint64_t>(worker)] =
      std::thread([mailbox, &backend, worker, profiler, c = std::move(check)] {
        Result<json> result = Error::Internal("the check did not run");
        try {
          result = backend.Evaluate(worker, c.request);
          // The profile tool's kernel-level view, on this worker's GPU while the
          // worker still holds it (not the run's first GPU, where another
          // worker may be timing).
          if (profiler && result && result->value("accepted", false)) {
            ProfileResult p =
                profiler({c.request.candidate_id, c.request.source, backend.GpuOf(worker)});
            (*result)["agent_profile"] = DraftProfileJson(p);
          }
        } catch (const std::exception& e) {
          result = Error::Internal(fmt::format("the check failed: {}", e.what()));
        }
        c.reply->set_value(std::move(result));
        mailbox->Post(CheckDone{worker});
      });
}

void OptimizeLoop::Handle(CheckDone done) {
  checking_.erase(done.worker);
  JoinThread(evaluation_threads_, static_cast<uint64_t>(done.worker));
}

void OptimizeLoop::Handle(EvaluationDone done) {
  evaluating_.erase(done.worker);
  JoinThread(evaluation_threads_, static_cast<uint64_t>(done.worker));
  if (done.error) {
    Error e = *done.error;
    e.message = fmt::format("evaluation of candidate {} could not be done: {}", done.candidate_id,
                            e.message);
    Fail(std::move(e));
    return;
  }
  auto it = unevaluated_.find(done.candidate_id);
  if (it == unevaluated_.end()) return;
  const CandidateRecord& c = it->second;
  EvaluationRecord record = MakeEvaluationRecord(c.id, done.result);
  auto recorded = store_.RecordEvaluation(record);
  if (!recorded) {
    Fail(recorded.error());
    return;
  }
  ++evaluations_;
  ++session_evaluations_;
  if (record.accepted && record.verdict == "ok" && record.speedup_eager &&
      (!best_speedup_ || *record.speedup_eager > *best_speedup_)) {
    best_speedup_ = record.speedup_eager;
  }
  EventRecord event;
  event.run_id = context_.run_id;
  event.type = "evaluation";
  event.island = c.island;
  event.iteration = c.iteration;
  event.detail_json = llm::DumpJson(
      {{"candidate_id", c.id},
       {"compiled", done.result.value("compiled", false)},
       {"correct", done.result.value("correct", false)},
       {"accepted", record.accepted},
       {"verdict", record.verdict},
       {"speedup",
        {{"eager", record.speedup_eager ? json(*record.speedup_eager) : json(nullptr)},
         {"compile", record.speedup_compile ? json(*record.speedup_compile) : json(nullptr)}}}});
  store_.RecordEventAsync(std::move(event));

  if (context_.knowledge != nullptr) {
    context_.knowledge->NoteEvaluation(c, record, /*live=*/true);
    if (auto update = context_.knowledge->UpdateFor(c, record)) {
      StartKnowledgeUpdate(std::move(*update));
    }
  }

  auto observation = MakeObservation(c, record.eval_json);
  if (!observation) {
    Fail(observation.error());
    return;
  }
  std::string line =
      fmt::format("[{}/{}] iteration {} candidate {}: {}", evaluations_, options_.iterations,
                  c.iteration, Short(c.id), Verdict(done.result));
  awaiting_[c.iteration] = std::move(observation).value();
  unevaluated_.erase(it);
  DeliverObservations();
  progress_.Event(line, Snapshot());
}

void OptimizeLoop::StartKnowledgeUpdate(KnowledgeUpdate update) {
  // Interrupted or failed: not applied here, so `kforge resume` applies it.
  if (cause_ == Cause::kSignal || cause_ == Cause::kFatal) return;
  if (!context_.knowledge->textual_gradient()) {
    StageReplies skipped;
    for (const char* stage :
         {kb::kStagePolicyEvaluation, kb::kStagePerfGapAnalysis, kb::kStageParameterUpdate}) {
      skipped.status[stage] = "skipped";
    }
    ApplyKnowledgeUpdate(update, skipped);
    return;
  }
  ++knowledge_updates_;
  uint64_t key = next_knowledge_thread_++;
  auto mailbox = mailbox_;
  ModelClient& model = model_;
  knowledge_threads_[key] = std::thread([mailbox, &model, key, u = std::move(update)]() mutable {
    KnowledgeStagesDone done;
    done.thread = key;
    done.replies = RunKnowledge::RunStages(model, u);
    done.update = std::move(u);
    mailbox->Post(std::move(done));
  });
}

void OptimizeLoop::Handle(KnowledgeStagesDone done) {
  --knowledge_updates_;
  JoinThread(knowledge_threads_, done.thread);
  ApplyKnowledgeUpdate(done.update, done.replies);
}

void OptimizeLoop::ApplyKnowledgeUpdate(const KnowledgeUpdate& update,
                                        const StageReplies& replies) {
  auto detail = context_.knowledge->Apply(store_, update, replies);
  if (!detail) {
    Fail(detail.error());
    return;
  }
  const json& gain = (*detail)["predicted_gain"];
  progress_.Event(
      fmt::format("kb: {} in state {} (candidate {}): predicted gain {} -> {:.3f}x{}",
                  update.technique, update.step.state, Short(update.candidate_id),
                  gain["old"].is_number() ? fmt::format("{:.3f}x", gain["old"].get<double>())
                                          : std::string("new"),
                  gain["new"].get<double>(),
                  (*detail)["text_update"].is_null() ? "" : ", entry rewritten"),
      Snapshot());
}

bool OptimizeLoop::StartProfile() {
  if (context_.knowledge == nullptr || !evaluating_.empty() || !checking_.empty() ||
      cause_ != Cause::kNone) {
    return false;
  }
  std::optional<ProfileJob> job = context_.knowledge->NextProfileJob();
  if (!job) return false;
  profiling_ = true;
  uint64_t key = next_knowledge_thread_++;
  auto mailbox = mailbox_;
  const RunKnowledge& knowledge = *context_.knowledge;
  knowledge_threads_[key] = std::thread([mailbox, &knowledge, key, j = std::move(*job)] {
    ProfileDone done;
    done.thread = key;
    done.result = knowledge.RunProfile(j);
    mailbox->Post(std::move(done));
  });
  return true;
}

void OptimizeLoop::Handle(ProfileDone done) {
  profiling_ = false;
  JoinThread(knowledge_threads_, done.thread);
  for (KnowledgeUpdate& u : context_.knowledge->OnProfile(done.result)) {
    StartKnowledgeUpdate(std::move(u));
  }
}

ProgressSnapshot OptimizeLoop::Snapshot() const {
  ProgressSnapshot s;
  s.evaluations = evaluations_;
  s.target = options_.iterations;
  s.best_speedup = best_speedup_;
  double minutes = std::chrono::duration<double>(Clock::now() - started_).count() / 60.0;
  s.evaluations_per_minute = minutes > 0 ? static_cast<double>(session_evaluations_) / minutes : 0;
  s.proposing = proposing_;
  s.evaluating = static_cast<int>(evaluating_.size() + checking_.size());
  llm::BudgetSpend spend = model_.spend();
  s.llm_calls = spend.calls;
  s.llm_tokens = spend.input_tokens + spend.output_tokens;
  s.llm_cost_usd = spend.cost_usd;
  return s;
}

Status OptimizeLoop::Finish(LoopOutcome& outcome) {
  outcome.evaluations = evaluations_;
  outcome.reason = reason_;
  outcome.error = error_;
  std::string type;
  if (cause_ == Cause::kFatal) {
    outcome.status = RunStatus::kFailed;
    type = "failed";
  } else if (evaluations_ >= options_.iterations) {
    // The target was reached, even if a stop arrived while the last
    // evaluation was in flight: nothing is left for `resume` to do.
    outcome.status = RunStatus::kCompleted;
    type = "completed";
  } else {
    outcome.status = RunStatus::kStopped;
    type = "stopped";
  }
  Status status_written = store_.SetRunStatus(context_.run_id, outcome.status);
  EventRecord event;
  event.run_id = context_.run_id;
  event.type = type;
  json detail = {{"evaluations", evaluations_},
                 {"target", options_.iterations},
                 {"pending", static_cast<int64_t>(unevaluated_.size())}};
  if (!reason_.empty()) detail["reason"] = reason_;
  if (outcome.abandoned) detail["abandoned"] = true;
  event.detail_json = llm::DumpJson(detail);
  auto seq = store_.RecordEvent(event);
  Status flushed = store_.Flush();
  if (!status_written) return status_written;
  if (!seq) return seq.error();
  return flushed;
}

Result<LoopOutcome> OptimizeLoop::Run() {
  started_ = Clock::now();
  if (Status st = Rebuild(); !st) return st.error();
  if (Status st = Begin(); !st) return st.error();
  if (context_.knowledge != nullptr) {
    // The first prompts want the reference's state: profile it before anything runs.
    while (std::optional<ProfileJob> job = context_.knowledge->NextProfileJob()) {
      progress_.Event("kb: profiling " + job->key + " with Nsight Compute", Snapshot());
      for (KnowledgeUpdate& u :
           context_.knowledge->OnProfile(context_.knowledge->RunProfile(*job))) {
        rebuilt_updates_.push_back(std::move(u));
      }
    }
    for (KnowledgeUpdate& u : rebuilt_updates_) StartKnowledgeUpdate(std::move(u));
    rebuilt_updates_.clear();
  }
  LoopOutcome outcome;
  auto next_tick = Clock::now();
  while (true) {
    if (stop_.abandon()) {
      outcome.abandoned = proposing_ > 0 || !evaluating_.empty();
      Stop(Cause::kSignal, "interrupted");
      break;
    }
    if (stop_.requested() && cause_ == Cause::kNone) {
      Stop(Cause::kSignal,
           proposing_ + evaluating_.size() > 0
               ? "interrupted; finishing the work in flight (interrupt again to abandon it)"
               : "interrupted");
    }
    if (cause_ == Cause::kNone) LaunchProposals();
    DispatchEvaluations();
    if (Finished()) break;
    auto now = Clock::now();
    if (now >= next_tick) {
      progress_.Tick(Snapshot());
      next_tick = now + std::chrono::milliseconds(options_.status_interval_ms);
    }
    auto message = mailbox_->Pop(std::min(next_tick, now + kPollInterval));
    if (!message) continue;
    std::visit([this](auto&& m) { Handle(std::move(m)); }, std::move(*message));
    if (Status st = SyncStrategy(); !st) Fail(st.error());
  }
  closed_->store(true);
  RefuseChecks();
  if (Status st = Finish(outcome); !st && !outcome.error) {
    outcome.status = RunStatus::kFailed;
    outcome.error = st.error();
    outcome.reason = st.error().message;
  }
  return outcome;
}

}  // namespace kforge::run
