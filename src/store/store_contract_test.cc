#include "store/store_contract_test.h"

#include <fmt/format.h>

#include <chrono>
#include <set>
#include <thread>
#include <vector>

#include "common/files.h"
#include "common/hash.h"

namespace kforge::store_testing {

void StoreContractTest::SetUp() {
  auto dir = MakeTempDir(std::filesystem::temp_directory_path(), "kforge-store-test-");
  ASSERT_TRUE(dir.ok()) << dir.error().message;
  scratch_ = *dir;
  location_ = GetParam().new_location(scratch_);
  store_ = MakeStore();
  ASSERT_NE(store_, nullptr);
}

void StoreContractTest::TearDown() {
  store_.reset();
  std::error_code ec;
  std::filesystem::remove_all(scratch_, ec);
}

void StoreContractTest::Reopen() {
  store_.reset();
  store_ = MakeStore();
  ASSERT_NE(store_, nullptr);
}

std::string BackendName(const ::testing::TestParamInfo<StoreBackend>& info) {
  return info.param.name;
}

namespace {

RunRecord SampleRun(const std::string& id, const std::string& created_at = "") {
  RunRecord run;
  run.id = id;
  run.created_at = created_at;
  run.task_name = "23_Softmax";
  run.task_path = "tasks/23_Softmax.py";
  run.task_hash = "th-" + id;
  run.strategy = "pacevolve";
  run.llm_spec = "openai:gpt-4o";
  run.device = "cuda:0";
  run.config_json = R"({"pacevolve":{"momentum_beta":0.5}})";
  run.iterations_target = 40;
  run.seed = 7;
  run.islands = 3;
  return run;
}

std::string MustCreateRun(Store& store, const std::string& id, const std::string& created_at = "") {
  auto r = store.CreateRun(SampleRun(id, created_at));
  EXPECT_TRUE(r.ok()) << r.error().message;
  return r.ok() ? *r : std::string();
}

std::string MustAddCandidate(Store& store, const std::string& run_id, const std::string& source,
                             int64_t iteration = 0, int64_t island = 0) {
  CandidateRecord c;
  c.run_id = run_id;
  c.source = source;
  c.format = "kernelbench";
  c.iteration = iteration;
  c.island = island;
  auto r = store.AddCandidate(c);
  EXPECT_TRUE(r.ok()) << r.error().message;
  return r.ok() ? r->id : std::string();
}

EvaluationRecord SampleEval(const std::string& candidate_id, bool accepted,
                            std::optional<double> eager, const std::string& verdict = "ok",
                            const std::string& created_at = "") {
  EvaluationRecord e;
  e.candidate_id = candidate_id;
  e.accepted = accepted;
  e.speedup_eager = eager;
  e.speedup_compile = eager ? std::optional<double>(*eager / 2) : std::nullopt;
  e.verdict = verdict;
  e.eval_json = fmt::format(R"({{"accepted": {}, "candidate_id": "{}"}})", accepted, candidate_id);
  e.created_at = created_at;
  return e;
}

void MustRecordEval(Store& store, const EvaluationRecord& e) {
  auto r = store.RecordEvaluation(e);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_TRUE(*r);
}

}  // namespace

TEST_P(StoreContractTest, RunRoundTripsEveryField) {
  RunRecord in = SampleRun("run-a", "2020-01-01T10:00:00.000000Z");
  auto id = store_->CreateRun(in);
  ASSERT_TRUE(id.ok()) << id.error().message;
  EXPECT_EQ(*id, "run-a");
  auto out = store_->GetRun("run-a");
  ASSERT_TRUE(out.ok()) << out.error().message;
  EXPECT_EQ(out->id, in.id);
  EXPECT_EQ(out->created_at, in.created_at);
  EXPECT_EQ(out->updated_at, in.created_at);
  EXPECT_EQ(out->status, RunStatus::kCreated);
  EXPECT_EQ(out->task_name, in.task_name);
  EXPECT_EQ(out->task_path, in.task_path);
  EXPECT_EQ(out->task_hash, in.task_hash);
  EXPECT_EQ(out->strategy, in.strategy);
  EXPECT_EQ(out->llm_spec, in.llm_spec);
  EXPECT_EQ(out->device, in.device);
  EXPECT_EQ(out->config_json, in.config_json);
  EXPECT_EQ(out->iterations_target, 40);
  EXPECT_EQ(out->seed, 7);
  EXPECT_EQ(out->islands, 3);

  ASSERT_TRUE(store_->SetRunStatus("run-a", RunStatus::kCompleted).ok());
  out = store_->GetRun("run-a");
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(out->status, RunStatus::kCompleted);
  EXPECT_GT(out->updated_at, out->created_at);
}

TEST_P(StoreContractTest, RunIdsAreGeneratedAndUnique) {
  auto id = store_->CreateRun(SampleRun(""));
  ASSERT_TRUE(id.ok()) << id.error().message;
  EXPECT_FALSE(id->empty());
  EXPECT_TRUE(store_->GetRun(*id).ok());

  auto again = store_->CreateRun(SampleRun(*id));
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.error().kind, ErrorKind::kBadInput);
  EXPECT_NE(again.error().message.find(*id), std::string::npos);
}

TEST_P(StoreContractTest, MissingRunIsNotFound) {
  auto run = store_->GetRun("nope");
  ASSERT_FALSE(run.ok());
  EXPECT_EQ(run.error().kind, ErrorKind::kNotFound);
  EXPECT_NE(run.error().message.find("nope"), std::string::npos);
  Status s = store_->SetRunStatus("nope", RunStatus::kFailed);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().kind, ErrorKind::kNotFound);
}

TEST_P(StoreContractTest, ListRunsNewestFirstWithEvaluationCounts) {
  MustCreateRun(*store_, "r1", "2026-11-23T10:00:00.000000Z");
  MustCreateRun(*store_, "r3", "2026-11-23T12:00:00.000000Z");
  MustCreateRun(*store_, "r2", "2026-11-23T11:00:00.000000Z");
  std::string a = MustAddCandidate(*store_, "r2", "a");
  std::string b = MustAddCandidate(*store_, "r2", "b");
  MustAddCandidate(*store_, "r1", "c");  // a candidate without evaluation does not count
  MustRecordEval(*store_, SampleEval(a, true, 1.2));
  MustRecordEval(*store_, SampleEval(b, false, std::nullopt, "rejected"));

  auto runs = store_->ListRuns();
  ASSERT_TRUE(runs.ok()) << runs.error().message;
  ASSERT_EQ(runs->size(), 3u);
  EXPECT_EQ((*runs)[0].run.id, "r3");
  EXPECT_EQ((*runs)[1].run.id, "r2");
  EXPECT_EQ((*runs)[2].run.id, "r1");
  EXPECT_EQ((*runs)[0].evaluations, 0);
  EXPECT_EQ((*runs)[1].evaluations, 2);
  EXPECT_EQ((*runs)[2].evaluations, 0);
  EXPECT_EQ((*runs)[1].run.strategy, "pacevolve");
}

TEST_P(StoreContractTest, TaskKeepsFirstRecord) {
  TaskRecord t{"hash-1", "23_Softmax", "a.py", "class Model: pass", ""};
  ASSERT_TRUE(store_->PutTask(t).ok());
  TaskRecord t2 = t;
  t2.path = "b.py";
  ASSERT_TRUE(store_->PutTask(t2).ok());
  auto got = store_->GetTask("hash-1");
  ASSERT_TRUE(got.ok()) << got.error().message;
  ASSERT_TRUE(got->has_value());
  EXPECT_EQ((*got)->path, "a.py");
  EXPECT_EQ((*got)->source, "class Model: pass");
  EXPECT_FALSE((*got)->created_at.empty());
  auto none = store_->GetTask("hash-2");
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->has_value());
}

TEST_P(StoreContractTest, BaselineIsKeyedByTaskGpuAndTorchAndReplaced) {
  ASSERT_TRUE(store_->PutBaseline({"th", "H100", "2.5.1", R"({"eager_ms":1.0})", ""}).ok());
  ASSERT_TRUE(store_->PutBaseline({"th", "A100", "2.5.1", R"({"eager_ms":2.0})", ""}).ok());
  ASSERT_TRUE(store_->PutBaseline({"th", "H100", "2.5.1", R"({"eager_ms":0.9})", ""}).ok());
  auto h100 = store_->GetBaseline("th", "H100", "2.5.1");
  ASSERT_TRUE(h100.ok()) << h100.error().message;
  ASSERT_TRUE(h100->has_value());
  EXPECT_EQ((*h100)->baseline_json, R"({"eager_ms":0.9})");
  auto a100 = store_->GetBaseline("th", "A100", "2.5.1");
  ASSERT_TRUE(a100.ok());
  ASSERT_TRUE(a100->has_value());
  EXPECT_EQ((*a100)->baseline_json, R"({"eager_ms":2.0})");
  auto other_torch = store_->GetBaseline("th", "H100", "2.6.0");
  ASSERT_TRUE(other_torch.ok());
  EXPECT_FALSE(other_torch->has_value());
}

TEST_P(StoreContractTest, IdenticalCandidatesAreStoredOnce) {
  MustCreateRun(*store_, "r");
  MustCreateRun(*store_, "s");
  CandidateRecord c;
  c.run_id = "r";
  c.source = "__global__ void k() {}";
  c.format = "native";
  c.island = 2;
  c.iteration = 5;
  auto first = store_->AddCandidate(c);
  ASSERT_TRUE(first.ok()) << first.error().message;
  EXPECT_TRUE(first->inserted);
  EXPECT_FALSE(first->id.empty());

  c.iteration = 6;  // a later proposal of the same source
  auto second = store_->AddCandidate(c);
  ASSERT_TRUE(second.ok()) << second.error().message;
  EXPECT_FALSE(second->inserted);
  EXPECT_EQ(second->id, first->id);

  auto found = store_->FindCandidate("r", Sha256Hex(c.source));
  ASSERT_TRUE(found.ok()) << found.error().message;
  ASSERT_TRUE(found->has_value());
  EXPECT_EQ((*found)->id, first->id);
  EXPECT_EQ((*found)->sha256, Sha256Hex(c.source));
  EXPECT_EQ((*found)->source, c.source);
  EXPECT_EQ((*found)->format, "native");
  EXPECT_EQ((*found)->island, 2);
  EXPECT_EQ((*found)->iteration, 5);

  c.run_id = "s";  // another run evaluates its own copy
  auto other_run = store_->AddCandidate(c);
  ASSERT_TRUE(other_run.ok());
  EXPECT_TRUE(other_run->inserted);
  EXPECT_NE(other_run->id, first->id);

  auto missing = store_->FindCandidate("r", Sha256Hex("something else"));
  ASSERT_TRUE(missing.ok());
  EXPECT_FALSE(missing->has_value());
}

TEST_P(StoreContractTest, CandidateParentsKeepTheirOrder) {
  MustCreateRun(*store_, "r");
  std::string p1 = MustAddCandidate(*store_, "r", "p1");
  std::string p2 = MustAddCandidate(*store_, "r", "p2");
  CandidateRecord child;
  child.run_id = "r";
  child.source = "child";
  child.format = "kernelbench";
  child.parent_ids = {p2, p1};
  auto id = store_->AddCandidate(child);
  ASSERT_TRUE(id.ok()) << id.error().message;
  auto got = store_->GetCandidate(id->id);
  ASSERT_TRUE(got.ok()) << got.error().message;
  EXPECT_EQ(got->parent_ids, (std::vector<std::string>{p2, p1}));
  auto all = store_->CandidatesOfRun("r");
  ASSERT_TRUE(all.ok());
  ASSERT_EQ(all->size(), 3u);
  for (const auto& c : *all) {
    if (c.id == id->id) {
      EXPECT_EQ(c.parent_ids, (std::vector<std::string>{p2, p1}));
    } else {
      EXPECT_TRUE(c.parent_ids.empty());
    }
  }
}

TEST_P(StoreContractTest, CandidateWithUnknownParentIsRejectedWhole) {
  MustCreateRun(*store_, "r");
  CandidateRecord child;
  child.run_id = "r";
  child.source = "orphan";
  child.format = "kernelbench";
  child.parent_ids = {"no-such-candidate"};
  auto r = store_->AddCandidate(child);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().kind, ErrorKind::kBadInput);
  EXPECT_NE(r.error().message.find("no-such-candidate"), std::string::npos);
  // The candidate row written before the failing parent link was undone too.
  auto found = store_->FindCandidate("r", Sha256Hex("orphan"));
  ASSERT_TRUE(found.ok());
  EXPECT_FALSE(found->has_value());
}

TEST_P(StoreContractTest, CandidateOfUnknownRunIsNotFound) {
  CandidateRecord c;
  c.run_id = "ghost";
  c.source = "x";
  c.format = "kernelbench";
  auto r = store_->AddCandidate(c);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().kind, ErrorKind::kNotFound);
  auto g = store_->GetCandidate("nope");
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.error().kind, ErrorKind::kNotFound);
}

TEST_P(StoreContractTest, CandidatesOfRunAreOrderedByIteration) {
  MustCreateRun(*store_, "r");
  MustAddCandidate(*store_, "r", "third", 3);
  MustAddCandidate(*store_, "r", "first", 1);
  MustAddCandidate(*store_, "r", "second", 2);
  auto all = store_->CandidatesOfRun("r");
  ASSERT_TRUE(all.ok()) << all.error().message;
  ASSERT_EQ(all->size(), 3u);
  EXPECT_EQ((*all)[0].source, "first");
  EXPECT_EQ((*all)[1].source, "second");
  EXPECT_EQ((*all)[2].source, "third");
}

TEST_P(StoreContractTest, CandidateRefersToItsLlmCall) {
  MustCreateRun(*store_, "r");
  LlmCallRecordRow call;
  call.run_id = "r";
  call.stage = "code";
  auto stored = store_->RecordLlmCall(call);
  ASSERT_TRUE(stored.ok()) << stored.error().message;
  CandidateRecord c;
  c.run_id = "r";
  c.source = "from the model";
  c.format = "kernelbench";
  c.llm_call_id = stored->id;
  auto id = store_->AddCandidate(c);
  ASSERT_TRUE(id.ok()) << id.error().message;
  auto got = store_->GetCandidate(id->id);
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->llm_call_id, stored->id);

  c.source = "from a call never recorded";
  c.llm_call_id = "no-such-call";
  auto bad = store_->AddCandidate(c);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().kind, ErrorKind::kBadInput);
}

TEST_P(StoreContractTest, FirstEvaluationWins) {
  MustCreateRun(*store_, "r");
  std::string c = MustAddCandidate(*store_, "r", "k");
  EvaluationRecord first = SampleEval(c, true, 1.5);
  MustRecordEval(*store_, first);
  EvaluationRecord second = SampleEval(c, false, std::nullopt, "rejected");
  auto again = store_->RecordEvaluation(second);
  ASSERT_TRUE(again.ok()) << again.error().message;
  EXPECT_FALSE(*again);

  auto got = store_->GetEvaluation(c);
  ASSERT_TRUE(got.ok()) << got.error().message;
  ASSERT_TRUE(got->has_value());
  EXPECT_EQ((*got)->run_id, "r");
  EXPECT_EQ((*got)->eval_json, first.eval_json);
  EXPECT_TRUE((*got)->accepted);
  EXPECT_EQ((*got)->speedup_eager, 1.5);
  EXPECT_EQ((*got)->speedup_compile, 0.75);
  EXPECT_EQ((*got)->verdict, "ok");
  EXPECT_FALSE((*got)->created_at.empty());

  auto count = store_->CountEvaluations("r");
  ASSERT_TRUE(count.ok());
  EXPECT_EQ(*count, 1);

  auto unknown = store_->RecordEvaluation(SampleEval("ghost", true, 1.0));
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.error().kind, ErrorKind::kNotFound);
  auto none = store_->GetEvaluation("ghost");
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->has_value());
}

TEST_P(StoreContractTest, EvaluationsOfRunCarryTheirCandidates) {
  MustCreateRun(*store_, "r");
  MustCreateRun(*store_, "other");
  std::string late = MustAddCandidate(*store_, "r", "late", 9, 1);
  std::string early = MustAddCandidate(*store_, "r", "early", 2, 0);
  MustAddCandidate(*store_, "r", "unevaluated", 4, 0);
  std::string foreign = MustAddCandidate(*store_, "other", "foreign", 1, 0);
  MustRecordEval(*store_, SampleEval(late, true, 2.0));
  MustRecordEval(*store_, SampleEval(early, false, std::nullopt, "rejected"));
  MustRecordEval(*store_, SampleEval(foreign, true, 9.0));

  auto evals = store_->EvaluationsOfRun("r");
  ASSERT_TRUE(evals.ok()) << evals.error().message;
  ASSERT_EQ(evals->size(), 2u);
  EXPECT_EQ((*evals)[0].candidate.id, early);
  EXPECT_EQ((*evals)[0].candidate.iteration, 2);
  EXPECT_FALSE((*evals)[0].evaluation.accepted);
  EXPECT_FALSE((*evals)[0].evaluation.speedup_eager.has_value());
  EXPECT_EQ((*evals)[0].evaluation.verdict, "rejected");
  EXPECT_EQ((*evals)[1].candidate.id, late);
  EXPECT_EQ((*evals)[1].candidate.island, 1);
  EXPECT_EQ((*evals)[1].candidate.source, "late");
  EXPECT_EQ((*evals)[1].evaluation.speedup_eager, 2.0);
}

TEST_P(StoreContractTest, BestEvaluationIsFastestAcceptedEarliestOnTies) {
  MustCreateRun(*store_, "r");
  auto best = store_->BestEvaluation("r", false);
  ASSERT_TRUE(best.ok()) << best.error().message;
  EXPECT_FALSE(best->has_value());

  std::string slow = MustAddCandidate(*store_, "r", "slow", 1);
  std::string tie_early = MustAddCandidate(*store_, "r", "tie early", 2);
  std::string tie_late = MustAddCandidate(*store_, "r", "tie late", 3);
  std::string wrong = MustAddCandidate(*store_, "r", "wrong but fast", 4);
  std::string suspect = MustAddCandidate(*store_, "r", "suspect", 5);
  MustRecordEval(*store_, SampleEval(slow, true, 1.5, "ok", "2026-11-23T10:00:01.000000Z"));
  MustRecordEval(*store_, SampleEval(tie_late, true, 2.0, "ok", "2026-11-23T10:00:03.000000Z"));
  MustRecordEval(*store_, SampleEval(tie_early, true, 2.0, "ok", "2026-11-23T10:00:02.000000Z"));
  MustRecordEval(*store_, SampleEval(wrong, false, 50.0, "ok", "2026-11-23T10:00:04.000000Z"));
  MustRecordEval(*store_, SampleEval(suspect, true, 3.0, "suspect", "2026-11-23T10:00:05.000000Z"));

  best = store_->BestEvaluation("r", false);
  ASSERT_TRUE(best.ok()) << best.error().message;
  ASSERT_TRUE(best->has_value());
  EXPECT_EQ((*best)->candidate.id, tie_early);
  EXPECT_EQ((*best)->candidate.source, "tie early");
  EXPECT_EQ((*best)->evaluation.speedup_eager, 2.0);

  auto with_suspect = store_->BestEvaluation("r", true);
  ASSERT_TRUE(with_suspect.ok());
  ASSERT_TRUE(with_suspect->has_value());
  EXPECT_EQ((*with_suspect)->candidate.id, suspect);
}

TEST_P(StoreContractTest, LlmCallsAreNumberedPerRunAndSummed) {
  MustCreateRun(*store_, "r");
  MustCreateRun(*store_, "s");
  LlmCallRecordRow call;
  call.run_id = "r";
  call.stage = "ideas";
  call.model_spec = "openai:gpt-4o";
  call.request_hash = "rh";
  call.request_json = R"({"messages":[]})";
  call.response_json = R"({"choices":[]})";
  call.text = "an idea";
  call.input_tokens = 100;
  call.output_tokens = 20;
  call.latency_ms = 812.5;
  call.cost_usd = 0.25;
  call.status = "ok";
  auto first = store_->RecordLlmCall(call);
  ASSERT_TRUE(first.ok()) << first.error().message;
  EXPECT_EQ(first->seq, 1);
  EXPECT_FALSE(first->id.empty());
  EXPECT_FALSE(first->created_at.empty());

  call.stage = "code";
  call.status = "error";
  call.error = "HTTP 500";
  auto second = store_->RecordLlmCall(call);
  ASSERT_TRUE(second.ok()) << second.error().message;
  EXPECT_EQ(second->seq, 2);

  call.run_id = "s";  // numbering is per run
  auto other = store_->RecordLlmCall(call);
  ASSERT_TRUE(other.ok());
  EXPECT_EQ(other->seq, 1);

  call.run_id = "r";
  call.seq = 2;
  auto dup = store_->RecordLlmCall(call);
  ASSERT_FALSE(dup.ok());
  EXPECT_EQ(dup.error().kind, ErrorKind::kBadInput);

  auto next = store_->NextLlmCallSeq("r");
  ASSERT_TRUE(next.ok());
  EXPECT_EQ(*next, 3);

  auto calls = store_->LlmCallsOfRun("r");
  ASSERT_TRUE(calls.ok()) << calls.error().message;
  ASSERT_EQ(calls->size(), 2u);
  EXPECT_EQ((*calls)[0].seq, 1);
  EXPECT_EQ((*calls)[0].stage, "ideas");
  EXPECT_EQ((*calls)[0].model_spec, "openai:gpt-4o");
  EXPECT_EQ((*calls)[0].request_hash, "rh");
  EXPECT_EQ((*calls)[0].request_json, R"({"messages":[]})");
  EXPECT_EQ((*calls)[0].response_json, R"({"choices":[]})");
  EXPECT_EQ((*calls)[0].text, "an idea");
  EXPECT_EQ((*calls)[0].latency_ms, 812.5);
  EXPECT_EQ((*calls)[0].error, "");
  EXPECT_EQ((*calls)[1].seq, 2);
  EXPECT_EQ((*calls)[1].status, "error");
  EXPECT_EQ((*calls)[1].error, "HTTP 500");

  auto usage = store_->LlmUsageOfRun("r");
  ASSERT_TRUE(usage.ok());
  EXPECT_EQ(usage->calls, 2);
  EXPECT_EQ(usage->input_tokens, 200);
  EXPECT_EQ(usage->output_tokens, 40);
  EXPECT_DOUBLE_EQ(usage->cost_usd, 0.5);
  auto empty = store_->LlmUsageOfRun("nobody");
  ASSERT_TRUE(empty.ok());
  EXPECT_EQ(empty->calls, 0);
}

TEST_P(StoreContractTest, EventsSyncAndAsyncKeepOrder) {
  MustCreateRun(*store_, "r");
  EventRecord e;
  e.run_id = "r";
  e.type = "backtrack";
  e.island = 1;
  e.iteration = 4;
  e.detail_json = R"({"to":2})";
  auto seq = store_->RecordEvent(e);
  ASSERT_TRUE(seq.ok()) << seq.error().message;
  EXPECT_EQ(*seq, 1);
  for (int i = 0; i < 50; ++i) {
    EventRecord a;
    a.run_id = "r";
    a.type = "idea_added";
    a.iteration = i;  // no island: a run-wide event
    a.detail_json = fmt::format(R"({{"i":{}}})", i);
    store_->RecordEventAsync(a);
  }
  ASSERT_TRUE(store_->Flush().ok());
  auto events = store_->EventsOfRun("r");
  ASSERT_TRUE(events.ok()) << events.error().message;
  ASSERT_EQ(events->size(), 51u);
  EXPECT_EQ((*events)[0].type, "backtrack");
  EXPECT_EQ((*events)[0].island, 1);
  EXPECT_EQ((*events)[0].iteration, 4);
  EXPECT_EQ((*events)[0].detail_json, R"({"to":2})");
  for (int i = 0; i < 50; ++i) {
    const EventRecord& got = (*events)[i + 1];
    EXPECT_EQ(got.seq, i + 2);
    EXPECT_EQ(got.type, "idea_added");
    EXPECT_FALSE(got.island.has_value());
    EXPECT_EQ(got.iteration, i);
    EXPECT_EQ(got.detail_json, fmt::format(R"({{"i":{}}})", i));
  }
  auto next = store_->NextEventSeq("r");
  ASSERT_TRUE(next.ok());
  EXPECT_EQ(*next, 52);
}

TEST_P(StoreContractTest, FailedAsyncEventIsReportedByFlushAlone) {
  MustCreateRun(*store_, "r");
  EventRecord good;
  good.run_id = "r";
  good.type = "kb_update";
  EventRecord bad = good;
  bad.run_id = "ghost";
  store_->RecordEventAsync(good);
  store_->RecordEventAsync(bad);
  store_->RecordEventAsync(good);
  Status flushed = store_->Flush();
  ASSERT_FALSE(flushed.ok());
  EXPECT_NE(flushed.error().message.find("ghost"), std::string::npos);
  EXPECT_TRUE(store_->Flush().ok());  // reported once
  auto events = store_->EventsOfRun("r");
  ASSERT_TRUE(events.ok());
  EXPECT_EQ(events->size(), 2u);  // the failure did not take its neighbours with it
}

TEST_P(StoreContractTest, IdeasUpsertKeepsCreationTime) {
  MustCreateRun(*store_, "r");
  IdeaRecord macro;
  macro.run_id = "r";
  macro.idea_id = "i1";
  macro.island = 0;
  macro.description = "tile the reduction";
  macro.hypotheses_json = R"(["smem tiles"])";
  macro.created_at = "2026-11-23T10:00:00.000000Z";
  macro.updated_at = macro.created_at;
  ASSERT_TRUE(store_->UpsertIdea(macro).ok());
  IdeaRecord micro;
  micro.run_id = "r";
  micro.idea_id = "i2";
  micro.island = 0;
  micro.parent_idea_id = "i1";
  micro.description = "use 128-wide tiles";
  ASSERT_TRUE(store_->UpsertIdea(micro).ok());

  macro.status = IdeaStatus::kPruned;
  macro.hypotheses_json = "[]";
  macro.created_at = "2027-01-01T00:00:00.000000Z";  // ignored: creation is kept
  macro.updated_at = "2026-11-23T11:00:00.000000Z";
  ASSERT_TRUE(store_->UpsertIdea(macro).ok());

  auto ideas = store_->IdeasOfRun("r");
  ASSERT_TRUE(ideas.ok()) << ideas.error().message;
  ASSERT_EQ(ideas->size(), 2u);
  const IdeaRecord& i1 = (*ideas)[0].idea_id == "i1" ? (*ideas)[0] : (*ideas)[1];
  const IdeaRecord& i2 = (*ideas)[0].idea_id == "i1" ? (*ideas)[1] : (*ideas)[0];
  EXPECT_EQ(i1.status, IdeaStatus::kPruned);
  EXPECT_EQ(i1.hypotheses_json, "[]");
  EXPECT_EQ(i1.created_at, "2026-11-23T10:00:00.000000Z");
  EXPECT_EQ(i1.updated_at, "2026-11-23T11:00:00.000000Z");
  EXPECT_EQ(i1.parent_idea_id, "");
  EXPECT_EQ(i2.parent_idea_id, "i1");
  EXPECT_EQ(i2.status, IdeaStatus::kActive);
  EXPECT_EQ(i2.description, "use 128-wide tiles");
}

TEST_P(StoreContractTest, KnowledgeBaseIsReplacedPerArch) {
  auto none = store_->GetKnowledgeBase("sm_90");
  ASSERT_TRUE(none.ok()) << none.error().message;
  EXPECT_FALSE(none->has_value());
  ASSERT_TRUE(store_->PutKnowledgeBase("sm_90", R"({"v":1})").ok());
  ASSERT_TRUE(store_->PutKnowledgeBase("sm_80", R"({"v":8})").ok());
  ASSERT_TRUE(store_->PutKnowledgeBase("sm_90", R"({"v":2})").ok());
  auto h = store_->GetKnowledgeBase("sm_90");
  ASSERT_TRUE(h.ok() && h->has_value());
  EXPECT_EQ(**h, R"({"v":2})");
  auto a = store_->GetKnowledgeBase("sm_80");
  ASSERT_TRUE(a.ok() && a->has_value());
  EXPECT_EQ(**a, R"({"v":8})");
  Status empty = store_->PutKnowledgeBase("", "{}");
  ASSERT_FALSE(empty.ok());
  EXPECT_EQ(empty.error().kind, ErrorKind::kBadInput);
}

TEST_P(StoreContractTest, StrategyStateIsReplacedPerRun) {
  MustCreateRun(*store_, "r");
  MustCreateRun(*store_, "s");
  auto none = store_->GetStrategyState("r");
  ASSERT_TRUE(none.ok()) << none.error().message;
  EXPECT_FALSE(none->has_value());
  ASSERT_TRUE(store_->PutStrategyState("r", R"({"v":1})").ok());
  ASSERT_TRUE(store_->PutStrategyState("s", R"({"v":9})").ok());
  ASSERT_TRUE(store_->PutStrategyState("r", R"({"v":2})").ok());
  auto r = store_->GetStrategyState("r");
  ASSERT_TRUE(r.ok() && r->has_value());
  EXPECT_EQ(**r, R"({"v":2})");
  auto s = store_->GetStrategyState("s");
  ASSERT_TRUE(s.ok() && s->has_value());
  EXPECT_EQ(**s, R"({"v":9})");
  Status unknown = store_->PutStrategyState("nope", "{}");
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.error().kind, ErrorKind::kNotFound);
}

TEST_P(StoreContractTest, JobsAreLeasedOnceAndFinishedByTheirEvaluation) {
  MustCreateRun(*store_, "r");
  MustCreateRun(*store_, "s");
  std::string a = MustAddCandidate(*store_, "r", "a");
  std::string b = MustAddCandidate(*store_, "r", "b");
  std::string foreign = MustAddCandidate(*store_, "s", "f");
  auto queued = store_->EnqueueJob("r", a);
  ASSERT_TRUE(queued.ok()) << queued.error().message;
  EXPECT_TRUE(*queued);
  queued = store_->EnqueueJob("r", a);
  ASSERT_TRUE(queued.ok());
  EXPECT_FALSE(*queued);  // idempotent
  ASSERT_TRUE(store_->EnqueueJob("r", b).ok());
  auto wrong_run = store_->EnqueueJob("r", foreign);
  ASSERT_FALSE(wrong_run.ok());
  EXPECT_EQ(wrong_run.error().kind, ErrorKind::kBadInput);

  auto first = store_->LeaseJob("r", "worker-1", 60000);
  ASSERT_TRUE(first.ok()) << first.error().message;
  ASSERT_TRUE(first->has_value());
  EXPECT_EQ((*first)->candidate_id, a);
  EXPECT_EQ((*first)->state, JobState::kLeased);
  EXPECT_EQ((*first)->lease_owner, "worker-1");
  EXPECT_EQ((*first)->attempts, 1);
  EXPECT_GT((*first)->lease_expires_at, IsoUtcNow());
  auto second = store_->LeaseJob("", "worker-2", 60000);  // any run
  ASSERT_TRUE(second.ok());
  ASSERT_TRUE(second->has_value());
  EXPECT_EQ((*second)->candidate_id, b);
  auto none = store_->LeaseJob("r", "worker-3", 60000);
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->has_value());

  EXPECT_TRUE(store_->HeartbeatJob(a, "worker-1", 60000).ok());
  Status stolen = store_->HeartbeatJob(a, "worker-2", 60000);
  ASSERT_FALSE(stolen.ok());
  EXPECT_EQ(stolen.error().kind, ErrorKind::kBadInput);

  MustRecordEval(*store_, SampleEval(a, true, 1.1));
  auto pending = store_->PendingJobs("r");
  ASSERT_TRUE(pending.ok()) << pending.error().message;
  ASSERT_EQ(pending->size(), 1u);
  EXPECT_EQ((*pending)[0].candidate_id, b);
  EXPECT_EQ((*pending)[0].state, JobState::kLeased);
  EXPECT_EQ((*pending)[0].lease_owner, "worker-2");

  ASSERT_TRUE(store_->CompleteJob(b).ok());
  pending = store_->PendingJobs("r");
  ASSERT_TRUE(pending.ok());
  EXPECT_TRUE(pending->empty());
  Status missing = store_->CompleteJob("ghost");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().kind, ErrorKind::kNotFound);
}

TEST_P(StoreContractTest, ExpiredLeaseGoesToTheNextWorker) {
  MustCreateRun(*store_, "r");
  std::string a = MustAddCandidate(*store_, "r", "a");
  ASSERT_TRUE(store_->EnqueueJob("r", a).ok());
  auto first = store_->LeaseJob("r", "dead-worker", 0);
  ASSERT_TRUE(first.ok());
  ASSERT_TRUE(first->has_value());
  std::this_thread::sleep_for(std::chrono::milliseconds(3));
  auto second = store_->LeaseJob("r", "live-worker", 60000);
  ASSERT_TRUE(second.ok()) << second.error().message;
  ASSERT_TRUE(second->has_value());
  EXPECT_EQ((*second)->candidate_id, a);
  EXPECT_EQ((*second)->lease_owner, "live-worker");
  EXPECT_EQ((*second)->attempts, 2);
  EXPECT_FALSE(store_->HeartbeatJob(a, "dead-worker", 60000).ok());
}

TEST_P(StoreContractTest, EverythingSurvivesReopening) {
  MustCreateRun(*store_, "r");
  std::string a = MustAddCandidate(*store_, "r", "a", 1);
  MustRecordEval(*store_, SampleEval(a, true, 1.7));
  EventRecord e;
  e.run_id = "r";
  e.type = "crossover";
  store_->RecordEventAsync(e);  // closing the store writes what is queued
  ASSERT_TRUE(store_->SetRunStatus("r", RunStatus::kStopped).ok());
  Reopen();
  auto run = store_->GetRun("r");
  ASSERT_TRUE(run.ok()) << run.error().message;
  EXPECT_EQ(run->status, RunStatus::kStopped);
  auto best = store_->BestEvaluation("r", false);
  ASSERT_TRUE(best.ok());
  ASSERT_TRUE(best->has_value());
  EXPECT_EQ((*best)->candidate.id, a);
  auto events = store_->EventsOfRun("r");
  ASSERT_TRUE(events.ok());
  ASSERT_EQ(events->size(), 1u);
  EXPECT_EQ((*events)[0].type, "crossover");
}

TEST_P(StoreContractTest, ConcurrentWritersShareOneStore) {
  MustCreateRun(*store_, "r");
  constexpr int kThreads = 6;
  constexpr int kSources = 15;
  std::vector<std::vector<std::string>> ids(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kSources; ++i) {
        // Every thread proposes the same sources: each must be stored once.
        auto r = store_->AddCandidate(
            {"", "r", "", fmt::format("src {}", i), "kernelbench", {}, t, i, "", ""});
        ids[t].push_back(r.ok() ? r->id : "error: " + r.error().message);
        if (r.ok()) {
          (void)store_->RecordEvaluation(SampleEval(r->id, true, 1.0 + i));
        }
        EventRecord e;
        e.run_id = "r";
        e.type = "tick";
        store_->RecordEventAsync(e);
      }
    });
  }
  for (auto& th : threads) th.join();
  ASSERT_TRUE(store_->Flush().ok());
  for (int t = 1; t < kThreads; ++t) EXPECT_EQ(ids[t], ids[0]);
  auto cands = store_->CandidatesOfRun("r");
  ASSERT_TRUE(cands.ok());
  EXPECT_EQ(cands->size(), static_cast<size_t>(kSources));
  auto count = store_->CountEvaluations("r");
  ASSERT_TRUE(count.ok());
  EXPECT_EQ(*count, kSources);
  auto events = store_->EventsOfRun("r");
  ASSERT_TRUE(events.ok());
  ASSERT_EQ(events->size(), static_cast<size_t>(kThreads * kSources));
  std::set<int64_t> seqs;
  for (const auto& e : *events) seqs.insert(e.seq);
  EXPECT_EQ(seqs.size(), events->size());
  EXPECT_EQ(*seqs.begin(), 1);
  EXPECT_EQ(*seqs.rbegin(), kThreads * kSources);
}

BenchRecord SampleBench(const std::string& id) {
  BenchRecord b;
  b.id = id;
  b.suite = "suites/level1";
  b.strategy = "pacevolve";
  b.llm_spec = "openai:gpt-4o";
  b.device = "cuda";
  b.config_json = R"({"pacevolve":{"max_ideas":4}})";
  b.iterations_target = 20;
  return b;
}

BenchRunRecord SampleBenchRun(const std::string& bench_id, const std::string& task,
                              int64_t position, const std::string& run_id) {
  BenchRunRecord r;
  r.bench_id = bench_id;
  r.task = task;
  r.task_path = "suites/level1/" + task + ".py";
  r.position = position;
  r.run_id = run_id;
  return r;
}

TEST_P(StoreContractTest, BenchRoundTripsAndListsItsRunsInSuiteOrder) {
  auto id = store_->CreateBench(SampleBench(""));
  ASSERT_TRUE(id.ok()) << id.error().message;
  EXPECT_EQ(id->rfind("bench-", 0), 0u) << *id;
  auto bench = store_->GetBench(*id);
  ASSERT_TRUE(bench.ok()) << bench.error().message;
  EXPECT_EQ(bench->suite, "suites/level1");
  EXPECT_EQ(bench->strategy, "pacevolve");
  EXPECT_EQ(bench->llm_spec, "openai:gpt-4o");
  EXPECT_EQ(bench->device, "cuda");
  EXPECT_EQ(bench->config_json, R"({"pacevolve":{"max_ideas":4}})");
  EXPECT_EQ(bench->iterations_target, 20);
  EXPECT_FALSE(bench->created_at.empty());

  MustCreateRun(*store_, "r-b");
  MustCreateRun(*store_, "r-a");
  ASSERT_TRUE(store_->AddBenchRun(SampleBenchRun(*id, "2_B", 1, "r-b")).ok());
  BenchRunRecord degenerate = SampleBenchRun(*id, "1_A", 0, "r-a");
  degenerate.degenerate = true;
  degenerate.degenerate_reason = "output is constant";
  ASSERT_TRUE(store_->AddBenchRun(degenerate).ok());

  auto runs = store_->ListBenchRuns(*id);
  ASSERT_TRUE(runs.ok()) << runs.error().message;
  ASSERT_EQ(runs->size(), 2u);
  EXPECT_EQ((*runs)[0].task, "1_A");
  EXPECT_EQ((*runs)[0].run_id, "r-a");
  EXPECT_TRUE((*runs)[0].degenerate);
  EXPECT_EQ((*runs)[0].degenerate_reason, "output is constant");
  EXPECT_EQ((*runs)[0].task_path, "suites/level1/1_A.py");
  EXPECT_EQ((*runs)[1].task, "2_B");
  EXPECT_FALSE((*runs)[1].degenerate);
  EXPECT_EQ((*runs)[1].position, 1);
}

TEST_P(StoreContractTest, BenchRunIsReplacedByTaskAndKeepsItsCreationTime) {
  ASSERT_TRUE(store_->CreateBench(SampleBench("b1")).ok());
  MustCreateRun(*store_, "first");
  MustCreateRun(*store_, "second");
  BenchRunRecord r = SampleBenchRun("b1", "1_A", 0, "first");
  r.created_at = "2026-01-01T00:00:00.000000Z";
  ASSERT_TRUE(store_->AddBenchRun(r).ok());
  r.run_id = "second";
  r.created_at = "2027-01-01T00:00:00.000000Z";
  r.degenerate = true;
  ASSERT_TRUE(store_->AddBenchRun(r).ok());
  auto runs = store_->ListBenchRuns("b1");
  ASSERT_TRUE(runs.ok()) << runs.error().message;
  ASSERT_EQ(runs->size(), 1u);
  EXPECT_EQ((*runs)[0].run_id, "second");
  EXPECT_TRUE((*runs)[0].degenerate);
  EXPECT_EQ((*runs)[0].created_at, "2026-01-01T00:00:00.000000Z");
  EXPECT_GT((*runs)[0].updated_at, (*runs)[0].created_at);
}

TEST_P(StoreContractTest, BenchErrorsAreValues) {
  auto missing = store_->GetBench("nope");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().kind, ErrorKind::kNotFound);
  EXPECT_NE(missing.error().message.find("nope"), std::string::npos);
  auto missing_runs = store_->ListBenchRuns("nope");
  ASSERT_FALSE(missing_runs.ok());
  EXPECT_EQ(missing_runs.error().kind, ErrorKind::kNotFound);

  ASSERT_TRUE(store_->CreateBench(SampleBench("b1")).ok());
  auto again = store_->CreateBench(SampleBench("b1"));
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.error().kind, ErrorKind::kBadInput);

  MustCreateRun(*store_, "r");
  Status unknown_bench = store_->AddBenchRun(SampleBenchRun("b2", "1_A", 0, "r"));
  ASSERT_FALSE(unknown_bench.ok());
  EXPECT_EQ(unknown_bench.error().kind, ErrorKind::kNotFound);
  Status unknown_run = store_->AddBenchRun(SampleBenchRun("b1", "1_A", 0, "ghost"));
  ASSERT_FALSE(unknown_run.ok());
  EXPECT_EQ(unknown_run.error().kind, ErrorKind::kNotFound);
  Status no_task = store_->AddBenchRun(SampleBenchRun("b1", "", 0, "r"));
  ASSERT_FALSE(no_task.ok());
  EXPECT_EQ(no_task.error().kind, ErrorKind::kBadInput);
  auto runs = store_->ListBenchRuns("b1");
  ASSERT_TRUE(runs.ok());
  EXPECT_TRUE(runs->empty());

  Reopen();
  auto bench = store_->GetBench("b1");
  ASSERT_TRUE(bench.ok()) << bench.error().message;
  EXPECT_EQ(bench->iterations_target, 20);
}

}  // namespace kforge::store_testing
