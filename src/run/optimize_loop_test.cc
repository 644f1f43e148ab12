// The optimize loop against a scripted model and a fake evaluation backend,
// on a real SQLite store: exact N, dedupe, stops, resume rebuild, ordering.
#include "run/optimize_loop.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <mutex>
#include <set>
#include <thread>

#include "common/files.h"
#include "common/hash.h"
#include "run/run_report.h"
#include "search/baseline/agent_strategy.h"

namespace kforge::run {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// Answers code (or an error) from a script, in call order; then repeats the last entry.
class ScriptedModel : public ModelClient {
 public:
  struct Entry {
    std::string code;
    std::optional<llm::LlmErrorKind> error;
  };
  explicit ScriptedModel(std::vector<Entry> script) : script_(std::move(script)) {}

  llm::LlmResult<llm::CodeReply> AskForCode(const std::string& stage, const llm::Prompt&,
                                            const std::vector<std::string>&) override {
    Entry e;
    {
      std::lock_guard lock(mu_);
      e = script_[std::min(calls_, script_.size() - 1)];
      ++calls_;
      if (on_call) on_call();
    }
    if (e.error) return llm::LlmError::Make(*e.error, "scripted failure");
    llm::CodeReply r;
    r.code.code = e.code;
    r.code.lang = "python";
    return r;
  }
  llm::LlmResult<llm::StructuredReply> AskStructured(const std::string&, const llm::Prompt&,
                                                     const llm::OutputSchema&) override {
    return llm::LlmError::Make(llm::LlmErrorKind::kBadSpec, "not scripted");
  }
  llm::BudgetSpend spend() const override {
    std::lock_guard lock(mu_);
    llm::BudgetSpend s;
    s.calls = static_cast<int64_t>(calls_);
    return s;
  }
  size_t calls() const {
    std::lock_guard lock(mu_);
    return calls_;
  }
  std::function<void()> on_call;

 private:
  mutable std::mutex mu_;
  std::vector<Entry> script_;
  size_t calls_ = 0;
};

json EvalJson(double speedup) {
  return {
      {"compiled", true},
      {"correct", true},
      {"accepted", true},
      {"compile", {{"log", ""}}},
      {"integrity", {{"verdict", "ok"}, {"flags", json::array()}}},
      {"timing", {{"candidate_ms", {{"median", 1.0 / speedup}}}, {"eager_ms", {{"median", 1.0}}}}},
      {"speedup", {{"eager", speedup}, {"compile", nullptr}}},
      {"reward", {{"milestone", speedup > 1.05 ? 2 : 1}}},
      {"error", nullptr}};
}

// Evaluates "code N" as speedup N/10; records what it evaluated.
class FakeBackend : public EvaluationBackend {
 public:
  explicit FakeBackend(int workers = 1) : workers_(workers) {}
  int workers() const override { return workers_; }
  std::string Describe() const override { return "fake"; }
  // Worker w "runs on" GPU first_gpu + w; no GPU when unset.
  std::optional<int> first_gpu;
  std::optional<int> GpuOf(int worker) const override {
    if (!first_gpu) return std::nullopt;
    return *first_gpu + worker;
  }
  Result<json> Evaluate(int worker, const EvaluationRequest& r) override {
    {
      std::lock_guard lock(mu_);
      evaluated.push_back(r.sha256);
      ++running;
    }
    if (delay_for) std::this_thread::sleep_for(delay_for(r));
    if (on_evaluate) on_evaluate(r);
    std::lock_guard lock(mu_);
    --running;
    if (fail_with) return *fail_with;
    double speedup = 1.0;
    if (r.source.rfind("code ", 0) == 0) speedup = std::stod(r.source.substr(5)) / 10.0;
    return EvalJson(speedup);
  }
  std::vector<std::string> Evaluated() {
    std::lock_guard lock(mu_);
    return evaluated;
  }

  std::function<std::chrono::milliseconds(const EvaluationRequest&)> delay_for;
  std::function<void(const EvaluationRequest&)> on_evaluate;
  std::optional<Error> fail_with;
  std::atomic<int> running{0};

 private:
  int workers_;
  std::mutex mu_;
  std::vector<std::string> evaluated;
};

// Proposes a fixed prompt; records what it observed and settled.
class RecordingStrategy : public search::Strategy {
 public:
  std::string name() const override { return "recording"; }
  std::optional<search::Proposal> Propose() override {
    search::Proposal p;
    p.id = next_id_++;
    p.stage = "test";
    p.prompt.Text("t", "write code");
    if (proposed == 0) observed_at_first_propose = observed;
    ++proposed;
    return p;
  }
  void Settle(uint64_t id, const search::ProposalOutcome& o) override { settled.push_back(o); }
  void Observe(const search::Observation& o) override {
    observed.push_back(o.iteration);
    observed_ids.push_back(o.candidate_id);
  }
  std::vector<int64_t> observed;
  std::vector<std::string> observed_ids;
  std::vector<search::ProposalOutcome> settled;
  std::vector<int64_t> observed_at_first_propose;
  int proposed = 0;

 private:
  uint64_t next_id_ = 1;
};

std::vector<ScriptedModel::Entry> Codes(int from, int to) {
  std::vector<ScriptedModel::Entry> out;
  for (int i = from; i <= to; ++i) out.push_back({"code " + std::to_string(i), std::nullopt});
  return out;
}

class OptimizeLoopTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto dir = MakeTempDir(fs::temp_directory_path(), "kforge-loop-test-");
    ASSERT_TRUE(dir.ok());
    dir_ = *dir;
    auto store = OpenStore((dir_ / "k.db").string());
    ASSERT_TRUE(store.ok()) << store.error().message;
    store_ = std::move(store).value();
  }
  void TearDown() override {
    store_.reset();
    fs::remove_all(dir_);
  }

  std::string NewRun(int64_t iterations) {
    RunRecord r;
    r.task_name = "t";
    r.strategy = "recording";
    r.llm_spec = "scripted";
    r.device = "cpu";
    r.iterations_target = iterations;
    auto id = store_->CreateRun(r);
    EXPECT_TRUE(id.ok());
    return *id;
  }

  LoopOutcome RunLoop(const std::string& run_id, search::Strategy& strategy, ModelClient& model,
                      EvaluationBackend& backend, LoopOptions options, bool resumed = false,
                      const StopRequest* stop = nullptr, const std::string& format = "cpp") {
    StopRequest no_stop;
    SilentProgress progress;
    OptimizeLoop loop(*store_, {run_id, format, resumed}, strategy, model, backend, options,
                      stop ? *stop : no_stop, progress);
    auto outcome = loop.Run();
    EXPECT_TRUE(outcome.ok()) << (outcome.ok() ? "" : outcome.error().message);
    return outcome.ok() ? *outcome : LoopOutcome{};
  }

  std::vector<std::string> EventTypes(const std::string& run_id) {
    EXPECT_TRUE(store_->Flush().ok());
    auto events = store_->EventsOfRun(run_id);
    std::vector<std::string> out;
    for (const EventRecord& e : *events) out.push_back(e.type);
    return out;
  }

  static LoopOptions Options(int64_t n, int in_flight = 2, int unusable = 10) {
    LoopOptions o;
    o.iterations = n;
    o.max_in_flight = in_flight;
    o.max_unusable_proposals = unusable;
    o.status_interval_ms = 50;
    return o;
  }

  fs::path dir_;
  std::unique_ptr<Store> store_;
};

TEST_F(OptimizeLoopTest, CompletesWithExactlyNEvaluations) {
  std::string run = NewRun(5);
  ScriptedModel model(Codes(1, 20));
  FakeBackend backend;
  RecordingStrategy strategy;
  LoopOutcome out = RunLoop(run, strategy, model, backend, Options(5));
  EXPECT_EQ(out.status, RunStatus::kCompleted);
  EXPECT_EQ(out.evaluations, 5);
  EXPECT_EQ(*store_->CountEvaluations(run), 5);
  auto candidates = store_->CandidatesOfRun(run);
  ASSERT_EQ(candidates->size(), 5u);
  for (size_t i = 0; i < candidates->size(); ++i) EXPECT_EQ((*candidates)[i].iteration, (int64_t)i);
  EXPECT_TRUE(store_->PendingJobs(run)->empty());
  EXPECT_EQ(backend.Evaluated().size(), 5u);
  EXPECT_EQ(strategy.observed, (std::vector<int64_t>{0, 1, 2, 3, 4}));
  EXPECT_LE(model.calls(), 5u);  // never asks for more than it needs
  EXPECT_EQ(store_->GetRun(run)->status, RunStatus::kCompleted);
  auto types = EventTypes(run);
  EXPECT_EQ(types.front(), "run_started");
  EXPECT_EQ(types.back(), "completed");
  EXPECT_EQ(std::count(types.begin(), types.end(), "evaluation"), 5);
  auto best = store_->BestEvaluation(run, false);
  ASSERT_TRUE(best.ok() && best->has_value());
  EXPECT_EQ((*best)->candidate.source, "code 5");
  EXPECT_EQ(RunExitCode(out), 0);
}

// A run's candidate format travels with every candidate: recorded with it,
// and native ones are evaluated as native (.cu) files.
TEST_F(OptimizeLoopTest, NativeRunsRecordAndEvaluateNativeCandidates) {
  for (const std::string format : {"native", "kernelbench"}) {
    std::string run = NewRun(2);
    ScriptedModel model(Codes(1, 20));
    FakeBackend backend;
    std::vector<bool> native;
    backend.on_evaluate = [&](const EvaluationRequest& r) { native.push_back(r.native); };
    RecordingStrategy strategy;
    LoopOutcome out = RunLoop(run, strategy, model, backend, Options(2, /*in_flight=*/1),
                              /*resumed=*/false, nullptr, format);
    EXPECT_EQ(out.status, RunStatus::kCompleted);
    EXPECT_EQ(native, std::vector<bool>(2, format == "native")) << format;
    auto candidates = store_->CandidatesOfRun(run);
    ASSERT_TRUE(candidates.ok());
    for (const auto& c : *candidates) EXPECT_EQ(c.format, format);
  }
}

TEST_F(OptimizeLoopTest, DuplicatesAreNeitherEvaluatedNorCounted) {
  std::string run = NewRun(3);
  ScriptedModel model({{"code 1", {}},
                       {"code 1", {}},
                       {"code 2", {}},
                       {"code 1", {}},
                       {"code 3", {}},
                       {"code 9", {}}});
  FakeBackend backend;
  RecordingStrategy strategy;
  LoopOutcome out = RunLoop(run, strategy, model, backend, Options(3, /*in_flight=*/1));
  EXPECT_EQ(out.status, RunStatus::kCompleted);
  auto evaluated = backend.Evaluated();
  ASSERT_EQ(evaluated.size(), 3u);
  EXPECT_EQ(std::set<std::string>(evaluated.begin(), evaluated.end()).size(), 3u);
  auto candidates = store_->CandidatesOfRun(run);
  std::vector<std::string> sources;
  for (const auto& c : *candidates) sources.push_back(c.source);
  EXPECT_EQ(sources, (std::vector<std::string>{"code 1", "code 2", "code 3"}));
  auto types = EventTypes(run);
  EXPECT_EQ(std::count(types.begin(), types.end(), "proposal_unusable"), 2);
  int failed = 0;
  for (const auto& s : strategy.settled) failed += s.kind == search::ProposalOutcome::Kind::kFailed;
  EXPECT_EQ(failed, 2);
}

// Always asks a structured stage; counts its state in SaveState and emits an
// event per settled reply (like pacevolve, whose replies may never yield code).
class StructuredStrategy : public search::Strategy {
 public:
  std::string name() const override { return "structured"; }
  std::optional<search::Proposal> Propose() override {
    search::Proposal p;
    p.id = next_id_++;
    p.stage = "classify";
    p.kind = search::ReplyKind::kStructured;
    p.schema = llm::OutputSchema{"s", "", json{{"type", "object"}}};
    p.prompt.Text("t", "answer in JSON");
    return p;
  }
  void Settle(uint64_t, const search::ProposalOutcome& o) override {
    if (o.kind == search::ProposalOutcome::Kind::kStructured) ++replies;
    events_.push_back({"idea_added", 0, 0, {{"n", replies}}});
  }
  void Observe(const search::Observation&) override {}
  std::vector<search::StrategyEvent> DrainEvents() override {
    std::vector<search::StrategyEvent> out;
    out.swap(events_);
    return out;
  }
  std::optional<json> SaveState() const override { return json{{"replies", replies}}; }
  Status RestoreState(const json& state) override {
    restored = state;
    replies = state.value("replies", 0);
    return Status::Ok();
  }
  int replies = 0;
  json restored;

 private:
  uint64_t next_id_ = 1;
  std::vector<search::StrategyEvent> events_;
};

class StructuredModel : public ScriptedModel {
 public:
  StructuredModel() : ScriptedModel(std::vector<Entry>{{"code 1", std::nullopt}}) {}
  llm::LlmResult<llm::StructuredReply> AskStructured(const std::string&, const llm::Prompt&,
                                                     const llm::OutputSchema&) override {
    llm::StructuredReply r;
    r.value = json{{"ok", true}};
    return r;
  }
};

TEST_F(OptimizeLoopTest, StopsWhenCallsNeverYieldACandidateAndSavesStrategyState) {
  std::string run = NewRun(3);
  StructuredModel model;
  FakeBackend backend;
  StructuredStrategy strategy;
  LoopOptions options = Options(3, 1);
  options.max_calls_per_candidate = 7;
  LoopOutcome out = RunLoop(run, strategy, model, backend, options);
  EXPECT_EQ(out.status, RunStatus::kStopped);
  EXPECT_NE(out.reason.find("7 LLM calls in a row produced no new candidate"), std::string::npos)
      << out.reason;
  EXPECT_EQ(out.evaluations, 0);
  EXPECT_EQ(strategy.replies, 7);
  auto types = EventTypes(run);
  EXPECT_EQ(std::count(types.begin(), types.end(), "idea_added"), 7);
  auto saved = store_->GetStrategyState(run);
  ASSERT_TRUE(saved.ok() && saved->has_value());
  EXPECT_EQ(json::parse(**saved), (json{{"replies", 7}}));

  // Resume restores the saved state before anything else.
  StructuredStrategy resumed;
  LoopOutcome again = RunLoop(run, resumed, model, backend, options, /*resumed=*/true);
  EXPECT_EQ(resumed.restored, (json{{"replies", 7}}));
  EXPECT_EQ(resumed.replies, 14);
  EXPECT_EQ(again.status, RunStatus::kStopped);
}

TEST_F(OptimizeLoopTest, StopsAfterTooManyUnusableProposals) {
  std::string run = NewRun(5);
  ScriptedModel model({{"code 1", {}}, {"", llm::LlmErrorKind::kNoCodeBlock}, {"code 1", {}}});
  FakeBackend backend;
  RecordingStrategy strategy;
  LoopOutcome out = RunLoop(run, strategy, model, backend, Options(5, 1, /*unusable=*/3));
  EXPECT_EQ(out.status, RunStatus::kStopped);
  EXPECT_NE(out.reason.find("3 proposals in a row"), std::string::npos) << out.reason;
  EXPECT_EQ(out.evaluations, 1);
  EXPECT_EQ(store_->GetRun(run)->status, RunStatus::kStopped);
  EXPECT_EQ(EventTypes(run).back(), "stopped");
}

TEST_F(OptimizeLoopTest, BudgetStopEvaluatesWhatWasPaidForAndStaysResumable) {
  std::string run = NewRun(6);
  std::vector<ScriptedModel::Entry> script = Codes(1, 3);
  script.push_back({"", llm::LlmErrorKind::kBudgetExhausted});
  ScriptedModel model(script);
  FakeBackend backend;
  RecordingStrategy strategy;
  LoopOutcome out = RunLoop(run, strategy, model, backend, Options(6));
  EXPECT_EQ(out.status, RunStatus::kStopped);
  EXPECT_NE(out.reason.find("budget"), std::string::npos);
  EXPECT_EQ(out.evaluations, 3);
  EXPECT_TRUE(store_->PendingJobs(run)->empty());
  EXPECT_EQ(RunExitCode(out), 0);

  // A larger budget: the resumed run continues to exactly N.
  ScriptedModel more(Codes(4, 20));
  RecordingStrategy rebuilt;
  LoopOutcome resumed = RunLoop(run, rebuilt, more, backend, Options(6), /*resumed=*/true);
  EXPECT_EQ(resumed.status, RunStatus::kCompleted);
  EXPECT_EQ(*store_->CountEvaluations(run), 6);
  EXPECT_EQ(rebuilt.observed, (std::vector<int64_t>{0, 1, 2, 3, 4, 5}));
  auto types = EventTypes(run);
  EXPECT_NE(std::find(types.begin(), types.end(), "run_resumed"), types.end());
}

TEST_F(OptimizeLoopTest, ResumeEvaluatesRecordedCandidatesFirstAndRebuildsTheStrategy) {
  std::string run = NewRun(6);
  // What a run killed mid-way leaves: two evaluated candidates, one with a
  // job in flight, one recorded just before its job was written.
  std::vector<std::string> ids;
  for (int i = 0; i < 4; ++i) {
    CandidateRecord c;
    c.run_id = run;
    c.source = "code " + std::to_string(i + 1);
    c.sha256 = Sha256Hex(c.source);
    c.format = "cpp";
    c.iteration = i;
    auto added = store_->AddCandidate(c);
    ASSERT_TRUE(added.ok());
    ids.push_back(added->id);
    if (i < 3) {
      ASSERT_TRUE(store_->EnqueueJob(run, added->id).ok());
    }
  }
  for (int i = 0; i < 2; ++i) {
    EvaluationRecord e;
    e.candidate_id = ids[i];
    e.eval_json = EvalJson((i + 1) / 10.0).dump();
    e.accepted = true;
    e.speedup_eager = (i + 1) / 10.0;
    e.verdict = "ok";
    ASSERT_TRUE(store_->RecordEvaluation(e).ok());
  }
  // The model repeats the recorded candidates first: they must not count again.
  ScriptedModel model(
      {{"code 1", {}}, {"code 3", {}}, {"code 5", {}}, {"code 6", {}}, {"code 7", {}}});
  FakeBackend backend;
  RecordingStrategy strategy;
  LoopOutcome out = RunLoop(run, strategy, model, backend, Options(6, 1), /*resumed=*/true);
  EXPECT_EQ(out.status, RunStatus::kCompleted);
  EXPECT_EQ(*store_->CountEvaluations(run), 6);
  auto evaluated = backend.Evaluated();
  ASSERT_GE(evaluated.size(), 2u);
  EXPECT_EQ(evaluated[0], Sha256Hex("code 3"));  // pending jobs first, in iteration order
  EXPECT_EQ(evaluated[1], Sha256Hex("code 4"));
  EXPECT_EQ(evaluated.size(), 4u);
  // The recorded evaluations were observed before anything was proposed.
  ASSERT_GE(strategy.observed_at_first_propose.size(), 2u);
  EXPECT_EQ(strategy.observed_at_first_propose[0], 0);
  EXPECT_EQ(strategy.observed_at_first_propose[1], 1);
  EXPECT_EQ(strategy.observed, (std::vector<int64_t>{0, 1, 2, 3, 4, 5}));
  std::set<std::string> shas;
  auto candidates = store_->CandidatesOfRun(run);
  ASSERT_TRUE(candidates.ok());
  for (const auto& c : *candidates) EXPECT_TRUE(shas.insert(c.sha256).second);
  EXPECT_EQ(shas.size(), 6u);
}

TEST_F(OptimizeLoopTest, ObservationsArriveInIterationOrderWithSeveralWorkers) {
  std::string run = NewRun(6);
  ScriptedModel model(Codes(1, 30));
  FakeBackend backend(/*workers=*/2);
  // Even iterations take longer, so odd ones finish first.
  backend.delay_for = [](const EvaluationRequest& r) {
    return std::chrono::milliseconds(r.iteration % 2 == 0 ? 60 : 5);
  };
  RecordingStrategy strategy;
  LoopOutcome out = RunLoop(run, strategy, model, backend, Options(6, 3));
  EXPECT_EQ(out.status, RunStatus::kCompleted);
  EXPECT_EQ(strategy.observed, (std::vector<int64_t>{0, 1, 2, 3, 4, 5}));
}

TEST_F(OptimizeLoopTest, ProposingOverlapsEvaluating) {
  std::string run = NewRun(4);
  ScriptedModel model(Codes(1, 30));
  FakeBackend backend;
  backend.delay_for = [](const EvaluationRequest&) { return std::chrono::milliseconds(50); };
  std::atomic<int> overlapped{0};
  model.on_call = [&] {
    if (backend.running > 0) ++overlapped;
  };
  RecordingStrategy strategy;
  LoopOutcome out = RunLoop(run, strategy, model, backend, Options(4, 2));
  EXPECT_EQ(out.status, RunStatus::kCompleted);
  EXPECT_GT(overlapped.load(), 0);
}

TEST_F(OptimizeLoopTest, StopDuringTheLastEvaluationStillCompletesTheRun) {
  std::string run = NewRun(9);
  ScriptedModel model(Codes(1, 30));
  FakeBackend backend;
  StopRequest stop;
  backend.on_evaluate = [&](const EvaluationRequest& r) {
    if (r.iteration == 2) stop.Request();
  };
  RecordingStrategy strategy;
  LoopOutcome out = RunLoop(run, strategy, model, backend, Options(3, 1), false, &stop);
  EXPECT_EQ(out.evaluations, 3);
  EXPECT_EQ(out.status, RunStatus::kCompleted);
  EXPECT_EQ(store_->GetRun(run)->status, RunStatus::kCompleted);
  EXPECT_EQ(EventTypes(run).back(), "completed");
}

TEST_F(OptimizeLoopTest, StopRequestFinishesWorkInFlightThenResumeCompletes) {
  std::string run = NewRun(5);
  ScriptedModel model(Codes(1, 30));
  FakeBackend backend;
  StopRequest stop;
  backend.on_evaluate = [&](const EvaluationRequest& r) {
    if (r.iteration == 1) stop.Request();
  };
  RecordingStrategy strategy;
  LoopOutcome out = RunLoop(run, strategy, model, backend, Options(5, 2), false, &stop);
  EXPECT_EQ(out.status, RunStatus::kStopped);
  EXPECT_FALSE(out.abandoned);
  EXPECT_EQ(out.evaluations, 2);  // the evaluation in flight was finished and recorded
  EXPECT_EQ(store_->GetRun(run)->status, RunStatus::kStopped);
  size_t candidates = store_->CandidatesOfRun(run)->size();
  EXPECT_EQ(store_->PendingJobs(run)->size(), candidates - 2);

  backend.on_evaluate = nullptr;
  ScriptedModel more(Codes(1, 30));  // repeats what was recorded, then new code
  RecordingStrategy rebuilt;
  LoopOutcome resumed = RunLoop(run, rebuilt, more, backend, Options(5, 2), true);
  EXPECT_EQ(resumed.status, RunStatus::kCompleted);
  EXPECT_EQ(*store_->CountEvaluations(run), 5);
  auto evaluated = backend.Evaluated();
  EXPECT_EQ(std::set<std::string>(evaluated.begin(), evaluated.end()).size(), evaluated.size());
}

TEST_F(OptimizeLoopTest, AnEvaluationThatCannotBeDoneFailsTheRunAndKeepsTheJob) {
  std::string run = NewRun(3);
  ScriptedModel model(Codes(1, 30));
  FakeBackend backend;
  backend.fail_with = Error::BadInput("task t: Model raised in __init__");
  RecordingStrategy strategy;
  LoopOutcome out = RunLoop(run, strategy, model, backend, Options(3, 1));
  EXPECT_EQ(out.status, RunStatus::kFailed);
  ASSERT_TRUE(out.error.has_value());
  EXPECT_EQ(out.error->kind, ErrorKind::kBadInput);
  EXPECT_EQ(RunExitCode(out), 2);
  EXPECT_EQ(*store_->CountEvaluations(run), 0);
  EXPECT_EQ(store_->PendingJobs(run)->size(), 1u);
  EXPECT_EQ(store_->GetRun(run)->status, RunStatus::kFailed);
}

TEST_F(OptimizeLoopTest, AnAuthFailureFailsTheRunAsBadInput) {
  std::string run = NewRun(3);
  ScriptedModel model({{"", llm::LlmErrorKind::kAuth}});
  FakeBackend backend;
  RecordingStrategy strategy;
  LoopOutcome out = RunLoop(run, strategy, model, backend, Options(3, 2));
  EXPECT_EQ(out.status, RunStatus::kFailed);
  EXPECT_EQ(RunExitCode(out), 2);
  EXPECT_TRUE(backend.Evaluated().empty());
}

TEST_F(OptimizeLoopTest, ReportsFollowTheContractShapes) {
  std::string run = NewRun(3);
  ScriptedModel model(Codes(1, 30));
  FakeBackend backend;
  RecordingStrategy strategy;
  LoopOutcome out = RunLoop(run, strategy, model, backend, Options(3));
  auto result = RunResultJson(*store_, run, &out);
  ASSERT_TRUE(result.ok());
  EXPECT_EQ((*result)["status"], "completed");
  EXPECT_EQ((*result)["evaluations"], 3);
  EXPECT_DOUBLE_EQ((*result)["best"]["speedup"]["eager"].get<double>(), 0.3);
  EXPECT_TRUE((*result)["best"]["speedup"]["compile"].is_null());
  for (const char* k : {"calls", "input_tokens", "output_tokens", "cost_usd"}) {
    EXPECT_TRUE((*result)["llm"].contains(k)) << k;
  }
  auto show = ShowJson(*store_, run);
  ASSERT_TRUE(show.ok());
  for (const char* k : {"run_id", "status", "task", "strategy", "evaluations", "events", "best"}) {
    EXPECT_TRUE(show->contains(k)) << k;
  }
  ASSERT_EQ((*show)["evaluations"].size(), 3u);
  for (const char* k : {"candidate_id", "iteration", "island", "accepted", "speedup", "verdict"}) {
    EXPECT_TRUE((*show)["evaluations"][0].contains(k)) << k;
  }
  for (const char* k : {"type", "island", "iteration", "detail"}) {
    EXPECT_TRUE((*show)["events"][0].contains(k)) << k;
  }
  auto runs = RunsJson(*store_);
  ASSERT_TRUE(runs.ok());
  ASSERT_EQ(runs->size(), 1u);
  for (const char* k : {"run_id", "status", "task", "strategy", "created_at", "evaluations"}) {
    EXPECT_TRUE((*runs)[0].contains(k)) << k;
  }
  auto exported = ExportBest(*store_, run, dir_ / "out");
  ASSERT_TRUE(exported.ok()) << exported.error().message;
  auto model_new = ReadFile(exported->model_new_path);
  ASSERT_TRUE(model_new.ok());
  EXPECT_NE(model_new->find("code 3"), std::string::npos);
  EXPECT_NE(model_new->find(run), std::string::npos);
  EXPECT_EQ(*ReadFile(exported->source_path), "code 3");
}

// Tool-using turns from a script: (episode, turn, request) -> the response.
// An episode starts with a request of two messages (skill and task).
class ScriptedAgentModel : public ModelClient {
 public:
  using Script = std::function<llm::LlmResponse(int episode, int turn, const llm::LlmRequest&)>;
  explicit ScriptedAgentModel(Script script) : script_(std::move(script)) {}

  llm::LlmResult<llm::LlmResponse> Complete(const llm::LlmRequest& request) override {
    std::lock_guard lock(mu_);
    if (request.messages.size() == 2) turn_[std::this_thread::get_id()] = {episodes_++, 0};
    auto& [episode, turn] = turn_[std::this_thread::get_id()];
    requests.push_back(request);
    llm::LlmResponse r = script_(episode, turn++, request);
    ++calls_;  // no call id: nothing is recorded in the call log here
    return r;
  }
  llm::LlmResult<llm::CodeReply> AskForCode(const std::string&, const llm::Prompt&,
                                            const std::vector<std::string>&) override {
    return llm::LlmError::Make(llm::LlmErrorKind::kBadSpec, "an agent run asks for no code");
  }
  llm::LlmResult<llm::StructuredReply> AskStructured(const std::string&, const llm::Prompt&,
                                                     const llm::OutputSchema&) override {
    return llm::LlmError::Make(llm::LlmErrorKind::kBadSpec, "not scripted");
  }
  llm::BudgetSpend spend() const override {
    std::lock_guard lock(mu_);
    llm::BudgetSpend s;
    s.calls = calls_;
    return s;
  }
  std::vector<llm::LlmRequest> requests;

 private:
  mutable std::mutex mu_;
  Script script_;
  std::map<std::thread::id, std::pair<int, int>> turn_;
  int episodes_ = 0;
  int64_t calls_ = 0;
};

llm::ToolCall Call(const std::string& name, json args, const std::string& id) {
  return {id, name, args.dump()};
}

llm::LlmResponse Turn(std::string text, std::vector<llm::ToolCall> calls) {
  llm::LlmResponse r;
  r.text = std::move(text);
  r.tool_calls = std::move(calls);
  r.usage = {100, 20};
  return r;
}

std::unique_ptr<search::AgentStrategy> MakeAgentStrategy() {
  auto templates = search::PromptTemplates::FromMap(
      {{"system", "You write kernels."},
       {"format_cpu", "format"},
       {"policy_strict", "policy"},
       {"rules", "rules"},
       {"task", "{{task_name}}: {{task_source}}"},
       {"hardware", "{{hardware}} {{baseline}}"},
       {"answer", "answer in a fence"},
       {"agent", "The file is {{candidate_file}}: {{start}} {{format_note}}"}});
  search::StrategyContext context;
  context.task_name = "t";
  context.task_source = "class Model: ...";
  context.device = "cpu";
  context.hardware = "a CPU";
  context.format = "cpp";
  context.policy = "strict";
  search::AgentOptions options;
  options.max_turns = 5;
  auto s =
      search::AgentStrategy::Create(context, templates, "SKILL: compile, verify, submit.", options);
  EXPECT_TRUE(s.ok()) << s.error().message;
  return std::move(s).value();
}

// Records the depth of every evaluation the backend was asked for.
struct DepthLog {
  std::mutex mu;
  std::vector<std::pair<EvalDepth, std::string>> seen;  // depth, source
  void Note(const EvaluationRequest& r) {
    std::lock_guard lock(mu);
    seen.push_back({r.depth, r.source});
  }
};

// An `agent` run: each proposal is an episode whose compile, verify and
// profile tools reach the backend as checks of the draft at their depth (not
// recorded as evaluations), and whose submitted file becomes the candidate,
// evaluated in full, with the submitting turn as its LLM call and the
// trajectory recorded as an agent_episode event. The second episode starts
// from the first's accepted candidate.
TEST_F(OptimizeLoopTest, AgentEpisodesCheckDraftsAndSubmitCandidates) {
  std::string run = NewRun(2);
  ScriptedAgentModel model([](int episode, int turn, const llm::LlmRequest&) {
    std::string code = fmt::format("code {}", episode + 1);
    switch (turn) {
      case 0:
        return Turn("Plan: fuse.",
                    {Call("write_file", {{"path", "model_new.py"}, {"content", code}}, "w"),
                     Call("compile", json::object(), "c")});
      case 1:
        return Turn("", {Call("verify", json::object(), "v")});
      default:
        return Turn("Done.",
                    {Call("profile", json::object(), "p"), Call("submit", json::object(), "s")});
    }
  });
  FakeBackend backend;
  DepthLog log;
  backend.on_evaluate = [&](const EvaluationRequest& r) { log.Note(r); };
  auto strategy = MakeAgentStrategy();
  LoopOutcome out = RunLoop(run, *strategy, model, backend, Options(2, /*in_flight=*/1));
  EXPECT_EQ(out.status, RunStatus::kCompleted) << out.reason;
  EXPECT_EQ(out.evaluations, 2);

  using D = EvalDepth;
  std::vector<std::pair<D, std::string>> want = {{D::kBuild, "code 1"}, {D::kCorrectness, "code 1"},
                                                 {D::kFull, "code 1"},  {D::kFull, "code 1"},
                                                 {D::kBuild, "code 2"}, {D::kCorrectness, "code 2"},
                                                 {D::kFull, "code 2"},  {D::kFull, "code 2"}};
  EXPECT_EQ(log.seen, want);

  auto candidates = *store_->CandidatesOfRun(run);
  ASSERT_EQ(candidates.size(), 2u);
  EXPECT_EQ(candidates[0].source, "code 1");
  EXPECT_TRUE(candidates[0].parent_ids.empty());
  EXPECT_EQ(candidates[1].source, "code 2");
  EXPECT_EQ(candidates[1].parent_ids, std::vector<std::string>{candidates[0].id});

  // The tools' answers came from the checks.
  const llm::LlmRequest& third = model.requests[2];
  std::string results;
  for (const auto& m : third.messages) {
    if (m.role == llm::Role::kTool) results += m.content + "\n";
  }
  EXPECT_NE(results.find("compile: ok\nbuilt and loaded"), std::string::npos) << results;
  EXPECT_NE(results.find("verify: ok\noutputs match the reference"), std::string::npos) << results;
  // The second episode is told of the first and finds its file in the workspace.
  const llm::LlmRequest& second_start = model.requests[3];
  EXPECT_EQ(second_start.messages.size(), 2u);
  EXPECT_EQ(second_start.messages[0].content.rfind("SKILL", 0), 0u);
  EXPECT_NE(second_start.messages[1].content.find("holds the current best"), std::string::npos);
  EXPECT_NE(second_start.messages[1].content.find("iteration 0: "), std::string::npos);

  ASSERT_TRUE(store_->Flush().ok());
  std::vector<json> episodes;
  std::vector<int64_t> episode_iterations;
  auto events = store_->EventsOfRun(run);
  ASSERT_TRUE(events.ok());
  for (const EventRecord& e : *events) {
    if (e.type != "agent_episode") continue;
    episodes.push_back(json::parse(e.detail_json));
    episode_iterations.push_back(e.iteration.value_or(-1));
  }
  ASSERT_EQ(episodes.size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(episode_iterations[i], candidates[i].iteration);  // the submitted candidate's
    EXPECT_EQ(episodes[i]["end"], "submitted");
    EXPECT_EQ(episodes[i]["candidate_id"], candidates[i].id);
    EXPECT_EQ(episodes[i]["stage"], "agent");
    EXPECT_EQ(episodes[i]["invalid_tool_calls"], 0);
    EXPECT_EQ(episodes[i]["turns"].size(), 3u);
    EXPECT_EQ(episodes[i]["tool_counts"]["verify"], 1);
    EXPECT_FALSE(episodes[i]["turns"][0]["steps"][1].contains("check"));  // summary text only
  }
}

// On a GPU run that profiles, the profile tool also reports the draft's
// Nsight Compute profile, taken on the check's worker (and its GPU) right
// after the evaluation that accepted it; compile and verify checks are not
// profiled.
TEST_F(OptimizeLoopTest, TheAgentsProfileToolAddsTheDraftsKernelProfile) {
  std::string run = NewRun(1);
  ScriptedAgentModel model([](int, int turn, const llm::LlmRequest&) {
    if (turn == 0) {
      return Turn("", {Call("write_file", {{"path", "model_new.py"}, {"content", "code 12"}}, "w"),
                       Call("verify", json::object(), "v"), Call("profile", json::object(), "p")});
    }
    return Turn("", {Call("submit", json::object(), "s")});
  });
  FakeBackend backend;
  backend.first_gpu = 3;
  auto strategy = MakeAgentStrategy();
  std::mutex mu;
  std::vector<ProfileJob> profiled;
  LoopContext context{run, "cpp", false};
  context.draft_profiler = [&](const ProfileJob& job) {
    std::lock_guard lock(mu);
    profiled.push_back(job);
    ProfileResult r;
    r.key = job.key;
    r.state = kb::StateClassification{};
    r.state->state = "memory_bound";
    r.state->primary = "kern: memory 88% of peak";
    r.summary = "kernel kern (1 launch(es), 10.00 us each)";
    return r;
  };
  StopRequest no_stop;
  SilentProgress progress;
  OptimizeLoop loop(*store_, context, *strategy, model, backend, Options(1, 1), no_stop, progress);
  auto out = loop.Run();
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(out->status, RunStatus::kCompleted) << out->reason;
  ASSERT_EQ(profiled.size(), 1u);  // the profile check only, not verify or the candidate
  EXPECT_EQ(profiled[0].source, "code 12");
  EXPECT_EQ(profiled[0].gpu, std::optional<int>(3));  // the check's worker's GPU
  std::string results;
  for (const auto& m : model.requests[1].messages) {
    if (m.role == llm::Role::kTool) results += m.content + "\n";
  }
  EXPECT_NE(results.find("Nsight Compute profile (one call):\nState `memory_bound`: kern: memory "
                         "88% of peak.\nkernel kern (1 launch(es)"),
            std::string::npos)
      << results;
}

// An episode that ends without a submission gives no candidate: the
// proposal is unusable (counted against run.max_unusable_proposals) and its
// trajectory is still recorded; the next episode goes on.
TEST_F(OptimizeLoopTest, AnAgentEpisodeWithoutSubmissionIsUnusable) {
  std::string run = NewRun(1);
  ScriptedAgentModel model([](int episode, int turn, const llm::LlmRequest&) {
    if (episode == 0) return Turn("I cannot do this.", {});
    if (turn == 0) {
      return Turn("", {Call("write_file", {{"path", "model_new.py"}, {"content", "code 7"}}, "w"),
                       Call("nonexistent_tool", json::object(), "x")});
    }
    return Turn("", {Call("submit", json::object(), "s")});
  });
  FakeBackend backend;
  auto strategy = MakeAgentStrategy();
  LoopOutcome out = RunLoop(run, *strategy, model, backend, Options(1, /*in_flight=*/1));
  EXPECT_EQ(out.status, RunStatus::kCompleted) << out.reason;
  auto types = EventTypes(run);
  EXPECT_EQ(std::count(types.begin(), types.end(), "proposal_unusable"), 1);
  std::vector<json> episodes;
  auto events = store_->EventsOfRun(run);
  ASSERT_TRUE(events.ok());
  std::vector<int64_t> episode_iterations;
  for (const EventRecord& e : *events) {
    if (e.type != "agent_episode") continue;
    episodes.push_back(json::parse(e.detail_json));
    episode_iterations.push_back(e.iteration.value_or(-1));
  }
  ASSERT_EQ(episodes.size(), 2u);
  // Both belong to iteration 0: the first gave no candidate, the second gave it.
  EXPECT_EQ(episode_iterations, (std::vector<int64_t>{0, 0}));
  EXPECT_EQ(episodes[0]["end"], "stopped");
  EXPECT_TRUE(episodes[0]["candidate_id"].is_null());
  EXPECT_NE(episodes[0]["reason"].get<std::string>().find("without a submission"),
            std::string::npos);
  EXPECT_EQ(episodes[1]["end"], "submitted");
  EXPECT_EQ(episodes[1]["invalid_tool_calls"], 1);
  EXPECT_EQ((*store_->CandidatesOfRun(run))[0].source, "code 7");
}

}  // namespace
}  // namespace kforge::run
