// The knowledge base in the optimize loop, on a real SQLite store with a
// scripted model and a fake evaluation backend (CPU: no profiles): the prompt
// section, the technique read back, the numeric and textual updates, the
// kb_update events, and resume applying each update exactly once.
#include "run/run_knowledge.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <mutex>

#include "common/files.h"
#include "kb/kb_store.h"
#include "kb/textual_gradient.h"
#include "run/optimize_loop.h"

namespace kforge::run {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// Code "code N" (N counting up) with a reply naming `technique`; valid
// answers to the three textual-gradient stages, or a failure for `fail_stage`.
class KbModel : public ModelClient {
 public:
  explicit KbModel(std::string technique) : technique_(std::move(technique)) {}

  llm::LlmResult<llm::CodeReply> AskForCode(const std::string&, const llm::Prompt& prompt,
                                            const std::vector<std::string>&) override {
    std::lock_guard lock(mu_);
    prompts.push_back(prompt);
    llm::CodeReply r;
    r.code.code = "code " + std::to_string(next_code_++);
    r.code.lang = "python";
    r.response.text = "Fusing is the plan.\n**Technique:** `" + technique_ + "`\n\n```python\n" +
                      r.code.code + "\n```\n";
    return r;
  }
  llm::LlmResult<llm::StructuredReply> AskStructured(const std::string& stage,
                                                     const llm::Prompt& prompt,
                                                     const llm::OutputSchema& schema) override {
    std::lock_guard lock(mu_);
    stages.push_back(stage);
    stage_prompts.push_back(prompt.Render().back().content);
    if (stage == fail_stage) {
      return llm::LlmError::Make(llm::LlmErrorKind::kSchemaViolation, "scripted invalid reply");
    }
    EXPECT_EQ(schema.name, stage);
    llm::StructuredReply r;
    if (stage == kb::kStagePolicyEvaluation) {
      r.value = {{"verdict", "better"},
                 {"expected", "1.1x"},
                 {"achieved", "1.2x"},
                 {"evidence", "one pass"}};
    } else if (stage == kb::kStagePerfGapAnalysis) {
      r.value = {{"explanation", "fewer passes"},
                 {"causes", {"memory traffic"}},
                 {"state_after", state_after}};
    } else {
      r.value = {{"notes", "pays off on chains of elementwise ops"},
                 {"description", ""},
                 {"new_state", nullptr},
                 {"new_techniques", json::array()}};
    }
    return r;
  }
  llm::BudgetSpend spend() const override { return {}; }

  std::vector<llm::Prompt> prompts;
  std::vector<std::string> stages;
  std::vector<std::string> stage_prompts;
  std::string fail_stage;
  std::string state_after = "memory_bound";  // what the gap analysis names

 private:
  std::mutex mu_;
  std::string technique_;
  int next_code_ = 11;
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
      {"reward", {{"milestone", 1}}},
      {"error", nullptr}};
}

// "code N" is N/10 times as fast as eager.
class TenthsBackend : public EvaluationBackend {
 public:
  int workers() const override { return 1; }
  std::string Describe() const override { return "fake"; }
  Result<json> Evaluate(int, const EvaluationRequest& r) override {
    return EvalJson(std::stod(r.source.substr(5)) / 10.0);
  }
};

// Always builds on the last accepted candidate, with an answer-format section last.
class ClimbingStrategy : public search::Strategy {
 public:
  std::string name() const override { return "climbing"; }
  std::optional<search::Proposal> Propose() override {
    search::Proposal p;
    p.id = next_id_++;
    p.stage = "refine";
    p.prompt.Text("task", "make it faster");
    p.prompt.Text("answer", "answer in one python block");
    if (!best_.empty()) p.parent_ids = {best_};
    return p;
  }
  void Settle(uint64_t, const search::ProposalOutcome&) override {}
  void Observe(const search::Observation& o) override {
    if (o.eval.accepted) best_ = o.candidate_id;
  }

 private:
  uint64_t next_id_ = 1;
  std::string best_;
};

class RunKnowledgeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto dir = MakeTempDir(fs::temp_directory_path(), "kforge-kb-loop-test-");
    ASSERT_TRUE(dir.ok());
    dir_ = *dir;
    auto store = OpenStore((dir_ / "k.db").string());
    ASSERT_TRUE(store.ok()) << store.error().message;
    store_ = std::move(store).value();
    auto templates = search::PromptTemplates::Load(search::PromptsDir());
    ASSERT_TRUE(templates.ok()) << templates.error().message;
    templates_ = std::move(templates).value();
  }
  void TearDown() override {
    store_.reset();
    fs::remove_all(dir_);
  }

  std::string NewRun(int64_t iterations) {
    RunRecord r;
    r.task_name = "t";
    r.strategy = "climbing";
    r.llm_spec = "scripted";
    r.device = "cpu";
    r.seed = 7;
    r.iterations_target = iterations;
    auto id = store_->CreateRun(r);
    EXPECT_TRUE(id.ok());
    return *id;
  }

  std::unique_ptr<RunKnowledge> Open(const std::string& run_id, bool textual_gradient = true,
                                     bool refine_states = true) {
    KnowledgeSetup setup;
    setup.run_id = run_id;
    setup.seed = 7;
    setup.device = "cpu";
    setup.hardware = "x86_64 CPU, 2 cores";
    setup.scratch = dir_;
    setup.options.textual_gradient = textual_gradient;
    setup.options.refine_states = refine_states;
    auto k = RunKnowledge::Open(*store_, setup, templates_);
    EXPECT_TRUE(k.ok()) << (k.ok() ? "" : k.error().message);
    return k.ok() ? std::move(k).value() : nullptr;
  }

  LoopOutcome RunLoop(const std::string& run_id, RunKnowledge& knowledge, KbModel& model,
                      int64_t iterations, bool resumed) {
    ClimbingStrategy strategy;
    TenthsBackend backend;
    LoopOptions options;
    options.iterations = iterations;
    options.max_in_flight = 1;
    options.status_interval_ms = 50;
    StopRequest no_stop;
    SilentProgress progress;
    OptimizeLoop loop(*store_, {run_id, "cpp", resumed, &knowledge}, strategy, model, backend,
                      options, no_stop, progress);
    auto outcome = loop.Run();
    EXPECT_TRUE(outcome.ok()) << (outcome.ok() ? "" : outcome.error().message);
    return outcome.ok() ? *outcome : LoopOutcome{};
  }

  std::vector<json> Events(const std::string& run_id, const std::string& type) {
    EXPECT_TRUE(store_->Flush().ok());
    auto events = store_->EventsOfRun(run_id);
    EXPECT_TRUE(events.ok());
    std::vector<json> out;
    for (const EventRecord& e : *events) {
      if (e.type == type) out.push_back(json::parse(e.detail_json));
    }
    return out;
  }

  kb::Optimization Stored(const std::string& state, const std::string& technique) {
    auto base = kb::LoadKnowledgeBase(*store_, "cpu");
    EXPECT_TRUE(base.ok());
    const kb::Optimization* o = base->Find(state, technique);
    EXPECT_NE(o, nullptr) << state << "/" << technique;
    return o ? *o : kb::Optimization{};
  }

  fs::path dir_;
  std::unique_ptr<Store> store_;
  search::PromptTemplates templates_ = search::PromptTemplates::FromMap({});
};

TEST(KnowledgeArch, CpuRunsHaveTheirOwnBaseAndGpusTheirArch) {
  EXPECT_EQ(KnowledgeArch("cpu", "x86_64 CPU, 16 cores"), "cpu");
  EXPECT_EQ(KnowledgeArch("cuda", "NVIDIA H100 80GB HBM3 (sm_90)"), "sm_90");
  EXPECT_EQ(KnowledgeArch("cuda", "an NVIDIA GPU"), "cuda");
}

TEST(KnowledgeSection, ShippedTemplateShowsStateDetailsAndOffersBeforeTheAnswer) {
  auto templates = search::PromptTemplates::Load(search::PromptsDir());
  ASSERT_TRUE(templates.ok()) << templates.error().message;
  kb::KbAdvice advice;
  advice.state = "memory_bound";
  advice.state_description = "DRAM is the limit";
  advice.profile_of = "The reference program";
  advice.details = "1 kernel, memory 88% of peak";
  advice.offers = {{"kernel_fusion", "fuse the elementwise ops", "", 1.2}};
  auto text = KnowledgeSectionText(*templates, advice);
  ASSERT_TRUE(text.ok()) << text.error().message;
  for (const char* part :
       {"## Knowledge base",
        "The reference program is in the performance state `memory_bound` "
        "(DRAM is the limit)",
        "1 kernel, memory 88% of peak", "`kernel_fusion` (predicted gain 1.20x)", "Technique:"}) {
    EXPECT_NE(text->find(part), std::string::npos) << part << "\n" << *text;
  }

  llm::Prompt prompt;
  prompt.Text("task", "the task");
  prompt.Text("answer", "the answer format");
  InsertKnowledgeSection(prompt, *text);
  ASSERT_EQ(prompt.sections().size(), 3u);
  EXPECT_EQ(prompt.sections()[1].name, "knowledge_base");
  EXPECT_EQ(prompt.sections()[1].trim, llm::TrimPolicy::kDropWhole);
  EXPECT_EQ(prompt.sections()[2].name, "answer");

  llm::Prompt no_answer;
  no_answer.Text("task", "the task");
  InsertKnowledgeSection(no_answer, *text);
  EXPECT_EQ(no_answer.sections().back().name, "knowledge_base");
}

TEST_F(RunKnowledgeTest, DecoratesCodeProposalsOnlyAndDrawsTheSameForTheSameSlot) {
  std::string run = NewRun(1);
  auto a = Open(run);
  auto b = Open(run);
  ASSERT_TRUE(a && b);
  EXPECT_EQ(a->arch(), "cpu");
  EXPECT_FALSE(a->profiling());  // a CPU run has no profile: state unknown
  search::Proposal code;
  code.id = 1;
  code.prompt.Text("answer", "fmt");
  search::Proposal same = code;
  a->Decorate(code, 4);
  b->Decorate(same, 4);
  ASSERT_EQ(code.prompt.sections().size(), 2u);
  const std::string& section = code.prompt.sections()[0].items[0];
  EXPECT_NE(section.find("`unknown`"), std::string::npos) << section;
  EXPECT_NE(section.find("on the CPU the state is unknown"), std::string::npos) << section;
  EXPECT_EQ(section, same.prompt.sections()[0].items[0]);

  search::Proposal structured;
  structured.id = 2;
  structured.kind = search::ReplyKind::kStructured;
  a->Decorate(structured, 5);
  EXPECT_TRUE(structured.prompt.sections().empty());
}

TEST_F(RunKnowledgeTest, EachCandidateNamingATechniqueUpdatesTheStoredBaseOnce) {
  std::string run = NewRun(2);
  auto knowledge = Open(run);
  ASSERT_TRUE(knowledge);
  double prior_gain = Stored(kb::kUnknown, "kernel_fusion").PredictedGain();
  KbModel model("kernel_fusion");
  LoopOutcome out = RunLoop(run, *knowledge, model, 2, /*resumed=*/false);
  EXPECT_EQ(out.status, RunStatus::kCompleted);

  // The section went into every code prompt, before the answer format.
  ASSERT_EQ(model.prompts.size(), 2u);
  for (const llm::Prompt& p : model.prompts) {
    ASSERT_EQ(p.sections().size(), 3u);
    EXPECT_EQ(p.sections()[1].name, "knowledge_base");
    EXPECT_NE(p.sections()[1].items[0].find("`kernel_fusion`"), std::string::npos);
  }
  // Three stages per candidate, in order, each shown the entry and the measurement.
  EXPECT_EQ(model.stages,
            (std::vector<std::string>{"kb_policy_evaluation", "kb_perf_gap_analysis",
                                      "kb_parameter_update", "kb_policy_evaluation",
                                      "kb_perf_gap_analysis", "kb_parameter_update"}));
  EXPECT_NE(model.stage_prompts[0].find("Technique `kernel_fusion` in state `unknown`"),
            std::string::npos);

  auto techniques = Events(run, kKbTechniqueEvent);
  ASSERT_EQ(techniques.size(), 2u);
  EXPECT_EQ(techniques[0]["technique"], "kernel_fusion");
  EXPECT_TRUE(techniques[0]["offered"].get<bool>());
  auto updates = Events(run, kKbUpdateEvent);
  ASSERT_EQ(updates.size(), 2u);
  const json& first = updates[0];
  EXPECT_EQ(first["technique"], "kernel_fusion");
  EXPECT_EQ(first["state"], "unknown");
  EXPECT_TRUE(first["accepted"].get<bool>());
  EXPECT_NEAR(first["speedup_over_parent"].get<double>(), 1.1, 1e-9);  // code 11 over eager
  EXPECT_NEAR(first["predicted_gain"]["old"].get<double>(), prior_gain, 1e-9);
  EXPECT_EQ(first["verdict"], "better");
  EXPECT_EQ(first["state_after"], "memory_bound");
  EXPECT_EQ(first["text_update"]["notes"], "pays off on chains of elementwise ops");
  for (const char* stage :
       {"kb_policy_evaluation", "kb_perf_gap_analysis", "kb_parameter_update"}) {
    EXPECT_EQ(first["stages"][stage], "ok");
  }
  // The second builds on the first: 1.2x over eager is 1.2/1.1 over its parent.
  EXPECT_NEAR(updates[1]["speedup_over_parent"].get<double>(), 1.2 / 1.1, 1e-9);
  EXPECT_EQ(updates[1]["predicted_gain"]["old"], first["predicted_gain"]["new"]);

  kb::Optimization stored = Stored(kb::kUnknown, "kernel_fusion");
  EXPECT_EQ(stored.attempts, 2);
  EXPECT_EQ(stored.successes, 2);
  EXPECT_EQ(stored.notes, "pays off on chains of elementwise ops");
  EXPECT_NEAR(stored.PredictedGain(), updates[1]["predicted_gain"]["new"].get<double>(), 1e-9);
}

// kb.refine_states: the gap analysis's state_after replaces the rules' state
// of a profiled candidate for its children's prompts, when the base knows the
// state; off, or naming a state the base does not know, the rules' stays.
TEST_F(RunKnowledgeTest, TheGapAnalysisRefinesAProfiledCandidatesStateForItsChildren) {
  struct Case {
    bool refine;
    std::string named;
    std::string want;  // the state the child's prompt is given
  };
  for (const Case& c : {Case{true, kb::kComputeBound, kb::kComputeBound},
                        Case{false, kb::kComputeBound, kb::kMemoryBound},
                        Case{true, "no_such_state", kb::kMemoryBound}}) {
    SCOPED_TRACE(c.named + (c.refine ? " refine" : " no refine"));
    std::string run = NewRun(1);
    auto knowledge = Open(run, /*textual_gradient=*/true, c.refine);
    ASSERT_TRUE(knowledge);
    search::Proposal proposal;
    proposal.id = 1;
    proposal.prompt.Text("answer", "fmt");
    knowledge->Decorate(proposal, 0);
    CandidateRecord parent;
    parent.id = "p1";
    ASSERT_TRUE(knowledge->OnCandidate(proposal, parent, "**Technique:** `kernel_fusion`\n"));
    // Its profile, by the rules: memory-bound.
    ProfileResult profile;
    profile.key = "p1";
    profile.state = kb::StateClassification{kb::kMemoryBound, "DRAM at 88% of peak", ""};
    profile.summary = "1 kernel";
    EXPECT_TRUE(knowledge->OnProfile(profile).empty());
    EvaluationRecord e;
    e.accepted = true;
    e.verdict = "ok";
    e.speedup_eager = 1.2;
    knowledge->NoteEvaluation(parent, e, /*live=*/true);
    auto update = knowledge->UpdateFor(parent, e);
    ASSERT_TRUE(update);
    EXPECT_NE(update->step.profile_after.find("memory_bound"), std::string::npos);
    KbModel model("kernel_fusion");
    model.state_after = c.named;
    auto detail = knowledge->Apply(*store_, *update, RunKnowledge::RunStages(model, *update));
    ASSERT_TRUE(detail.ok()) << detail.error().message;
    EXPECT_EQ((*detail)["state_after"], c.named);
    EXPECT_EQ((*detail)["state_refined"],
              c.want == kb::kMemoryBound ? json(nullptr) : json(c.want));

    search::Proposal child;
    child.id = 2;
    child.parent_ids = {"p1"};
    child.prompt.Text("answer", "fmt");
    knowledge->Decorate(child, 1);
    ASSERT_EQ(child.prompt.sections().size(), 2u);
    const std::string& section = child.prompt.sections()[0].items[0];
    EXPECT_NE(section.find("performance state `" + c.want + "`"), std::string::npos) << section;
    EXPECT_EQ(section.find("the rules above say") != std::string::npos, c.want != kb::kMemoryBound)
        << section;

    // A resumed run gives the child the same state (rebuilt from the kb_update event).
    if (c.refine) {
      auto resumed = Open(run, true, c.refine);
      ASSERT_TRUE(resumed);
      auto events = store_->EventsOfRun(run);
      ASSERT_TRUE(events.ok());
      resumed->Rebuild(*events);
      EXPECT_TRUE(resumed->OnProfile(profile).empty());
      search::Proposal again = child;
      again.prompt = llm::Prompt();
      again.prompt.Text("answer", "fmt");
      resumed->Decorate(again, 1);
      ASSERT_EQ(again.prompt.sections().size(), 2u);
      EXPECT_NE(again.prompt.sections()[0].items[0].find("performance state `" + c.want + "`"),
                std::string::npos);
    }
  }
}

TEST_F(RunKnowledgeTest, AFailedStageKeepsTheNumericUpdate) {
  std::string run = NewRun(1);
  auto knowledge = Open(run);
  ASSERT_TRUE(knowledge);
  KbModel model("kernel_fusion");
  model.fail_stage = kb::kStagePerfGapAnalysis;
  LoopOutcome out = RunLoop(run, *knowledge, model, 1, false);
  EXPECT_EQ(out.status, RunStatus::kCompleted);
  auto updates = Events(run, kKbUpdateEvent);
  ASSERT_EQ(updates.size(), 1u);
  EXPECT_EQ(updates[0]["stages"]["kb_policy_evaluation"], "ok");
  EXPECT_EQ(updates[0]["stages"]["kb_perf_gap_analysis"].get<std::string>().rfind("failed", 0), 0u);
  EXPECT_EQ(updates[0]["stages"]["kb_parameter_update"], "skipped");
  EXPECT_TRUE(updates[0]["text_update"].is_null());
  kb::Optimization stored = Stored(kb::kUnknown, "kernel_fusion");
  EXPECT_EQ(stored.attempts, 1);
  EXPECT_TRUE(stored.notes.empty());
}

TEST_F(RunKnowledgeTest, WithoutTextualGradientOnlyTheNumbersChange) {
  std::string run = NewRun(1);
  auto knowledge = Open(run, /*textual_gradient=*/false);
  ASSERT_TRUE(knowledge);
  KbModel model("loop_unrolling");  // not offered: becomes a new entry of the state
  RunLoop(run, *knowledge, model, 1, false);
  EXPECT_TRUE(model.stages.empty());
  auto updates = Events(run, kKbUpdateEvent);
  ASSERT_EQ(updates.size(), 1u);
  EXPECT_TRUE(updates[0]["predicted_gain"]["old"].is_null());
  EXPECT_EQ(Stored(kb::kUnknown, "loop_unrolling").attempts, 1);
}

TEST_F(RunKnowledgeTest, ResumeAppliesAnUpdateLeftPendingOnceAndNeverTwice) {
  std::string run = NewRun(1);
  // As if killed between the evaluation record and the knowledge-base update:
  // the candidate, its kb_technique event and its evaluation are recorded.
  {
    auto knowledge = Open(run);
    search::Proposal p;
    p.id = 1;
    p.prompt.Text("answer", "fmt");
    knowledge->Decorate(p, 0);
    CandidateRecord c;
    c.run_id = run;
    c.sha256 = "sha-of-code-15";
    c.source = "code 15";
    c.format = "cpp";
    auto added = store_->AddCandidate(c);
    ASSERT_TRUE(added.ok());
    c.id = added->id;
    auto event = knowledge->OnCandidate(p, c, "Technique: kernel_fusion\n```python\ncode 15\n```");
    ASSERT_TRUE(event.has_value());
    ASSERT_TRUE(store_->RecordEvent(*event).ok());
    EvaluationRecord e;
    e.candidate_id = c.id;
    e.eval_json = EvalJson(1.5).dump();
    e.accepted = true;
    e.speedup_eager = 1.5;
    e.verdict = "ok";
    ASSERT_TRUE(store_->RecordEvaluation(e).ok());
  }
  for (int resume = 0; resume < 2; ++resume) {
    auto knowledge = Open(run);
    KbModel model("kernel_fusion");
    LoopOutcome out = RunLoop(run, *knowledge, model, 1, /*resumed=*/true);
    EXPECT_EQ(out.status, RunStatus::kCompleted);
    EXPECT_TRUE(model.prompts.empty());  // nothing left to propose
    EXPECT_EQ(model.stages.size(), resume == 0 ? 3u : 0u);
    EXPECT_EQ(Events(run, kKbUpdateEvent).size(), 1u);
    EXPECT_EQ(Stored(kb::kUnknown, "kernel_fusion").attempts, 1);
  }
  EXPECT_NEAR(Events(run, kKbUpdateEvent)[0]["speedup_over_parent"].get<double>(), 1.5, 1e-9);
}

TEST_F(RunKnowledgeTest, AResumedRunLearnsOnlyFromItsNewCandidates) {
  std::string run = NewRun(3);
  {
    auto knowledge = Open(run);
    KbModel model("kernel_fusion");
    RunLoop(run, *knowledge, model, 2, false);
  }
  ASSERT_EQ(Events(run, kKbUpdateEvent).size(), 2u);
  auto knowledge = Open(run);
  KbModel model("kernel_fusion");
  LoopOutcome out = RunLoop(run, *knowledge, model, 3, /*resumed=*/true);
  EXPECT_EQ(out.evaluations, 3);
  EXPECT_EQ(model.stages.size(), 3u);  // one candidate's stages
  auto updates = Events(run, kKbUpdateEvent);
  ASSERT_EQ(updates.size(), 3u);
  std::set<std::string> ids;
  for (const json& u : updates) ids.insert(u["candidate_id"].get<std::string>());
  EXPECT_EQ(ids.size(), 3u);
  EXPECT_EQ(Stored(kb::kUnknown, "kernel_fusion").attempts, 3);
}

}  // namespace
}  // namespace kforge::run
