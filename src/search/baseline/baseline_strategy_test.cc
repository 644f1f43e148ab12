#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "search/baseline/agent_strategy.h"
#include "search/baseline/attempt_feedback.h"
#include "search/baseline/best_of_n_strategy.h"
#include "search/baseline/greedy_strategy.h"
#include "search/baseline/prompt_templates.h"

namespace kforge::search {
namespace {

std::string RenderAll(const llm::Prompt& p) {
  std::string out;
  for (const llm::ChatMessage& m : p.Render()) out += m.content + "\n";
  return out;
}

StrategyContext Context(const std::string& device = "cpu") {
  StrategyContext c;
  c.task_name = "fused_bias_relu6_scale";
  c.task_source = "class Model(nn.Module):\n    pass  # TASK-SOURCE-MARKER\n";
  c.device = device;
  c.hardware = "test CPU, 2 cores";
  c.format = device == "cuda" ? "kernelbench" : "cpp";
  c.policy = "strict";
  return c;
}

PromptTemplates Templates() {
  auto t = PromptTemplates::Load(PromptsDir());
  EXPECT_TRUE(t.ok()) << (t.ok() ? "" : t.error().message);
  return std::move(t).value();
}

Observation Accepted(const std::string& id, int64_t iteration, double speedup) {
  Observation o;
  o.candidate_id = id;
  o.iteration = iteration;
  o.source = "# source of " + id + "\n";
  o.eval.compiled = o.eval.correct = o.eval.accepted = true;
  o.eval.verdict = "ok";
  o.eval.eager_ms = 10.0;
  o.eval.candidate_ms = 10.0 / speedup;
  o.eval.speedup_eager = speedup;
  o.eval.milestone = speedup > 1.05 ? 2 : 1;
  return o;
}

Observation CompileFailure(const std::string& id, int64_t iteration) {
  Observation o;
  o.candidate_id = id;
  o.iteration = iteration;
  o.source = "# broken source of " + id + "\n";
  o.eval.compile_log =
      "[1/2] c++ -c main.cpp\nmain.cpp:12:5: error: 'undeclared_thing' was not declared in "
      "this scope\n   12 |     undeclared_thing(x);\nninja: build stopped: subcommand failed.\n";
  o.eval.error = "build/load failed (candidate_error): Error building extension 'x'";
  o.eval.verdict = "ok";
  return o;
}

Observation WrongOutput(const std::string& id, int64_t iteration) {
  Observation o;
  o.candidate_id = id;
  o.iteration = iteration;
  o.source = "# wrong source of " + id + "\n";
  o.eval.compiled = true;
  o.eval.verdict = "ok";
  o.eval.trials = 5;
  o.eval.max_abs_err = 6.0;
  o.eval.max_rel_err = 1.0;
  o.eval.correctness_detail = "trial 0: output 0 differs at [3, 17]: 6.0 vs 0.0";
  return o;
}

TEST(PromptTemplatesTest, RendersPlaceholdersAndRejectsUnknownOnes) {
  auto t = PromptTemplates::FromMap({{"a", "\n\nHello {{who}}, {{who}}!\n\n"}, {"b", "{{nope}}"}});
  auto a = t.Render("a", {{"who", "{{x}}"}});
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(*a, "Hello {{x}}, {{x}}!");  // values are not re-scanned
  auto b = t.Render("b", {});
  ASSERT_FALSE(b.ok());
  EXPECT_NE(b.error().message.find("nope"), std::string::npos);
  auto missing = t.Render("c", {});
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().message.find("c.txt"), std::string::npos);
}

TEST(PromptTemplatesTest, MissingDirectoryIsBadInput) {
  auto t = PromptTemplates::Load("/nonexistent/kforge/prompts");
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.error().kind, ErrorKind::kBadInput);
}

TEST(GreedyStrategyTest, FirstPromptStartsFromTheReferenceWithFormatAndPolicy) {
  auto g = GreedyStrategy::Create(Context("cpu"), Templates(), {});
  ASSERT_TRUE(g.ok()) << g.error().message;
  auto p = (*g)->Propose();
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->stage, "refine");
  EXPECT_TRUE(p->parent_ids.empty());
  std::string text = RenderAll(p->prompt);
  EXPECT_NE(text.find("TASK-SOURCE-MARKER"), std::string::npos);
  EXPECT_NE(text.find("cpp_sources"), std::string::npos);  // the CPU format
  EXPECT_EQ(text.find("cuda_sources=[cuda_source]"), std::string::npos);
  EXPECT_NE(text.find("Policy `strict`"), std::string::npos);
  EXPECT_NE(text.find("test CPU, 2 cores"), std::string::npos);
  EXPECT_NE(text.find("```python"), std::string::npos);
  EXPECT_NE(text.find("reference program"), std::string::npos);
}

TEST(GreedyStrategyTest, CudaPromptAsksForLoadInlineCuda) {
  auto g = GreedyStrategy::Create(Context("cuda"), Templates(), {});
  ASSERT_TRUE(g.ok());
  std::string text = RenderAll((*g)->Propose()->prompt);
  EXPECT_NE(text.find("cuda_sources"), std::string::npos);
  EXPECT_NE(text.find("__global__"), std::string::npos);
}

// run.candidate_format=native: the native format and answer replace the
// KernelBench ones (and the policy, which speaks of PyTorch); code is asked
// for, and shown back, in cuda fences.
TEST(GreedyStrategyTest, NativePromptAsksForACudaFile) {
  StrategyContext c = Context("cuda");
  c.format = "native";
  auto g = GreedyStrategy::Create(c, Templates(), {});
  ASSERT_TRUE(g.ok()) << g.error().message;
  auto first = (*g)->Propose();
  std::string text = RenderAll(first->prompt);
  EXPECT_NE(text.find("kforge_forward"), std::string::npos);
  EXPECT_NE(text.find("starts with ```cuda"), std::string::npos);
  EXPECT_EQ(text.find("cuda_sources"), std::string::npos);
  EXPECT_EQ(text.find("Policy `strict`"), std::string::npos);
  EXPECT_EQ(text.find("```python\n#"), std::string::npos);
  ASSERT_FALSE(first->code_langs.empty());
  EXPECT_EQ(first->code_langs.front(), "cuda");
  (*g)->Settle(first->id, {ProposalOutcome::Kind::kSubmitted, "c0", 0, {}, ""});
  Observation a = Accepted("c0", 0, 2.0);
  a.source = "// native source of c0\n";
  (*g)->Observe(a);
  text = RenderAll((*g)->Propose()->prompt);
  EXPECT_NE(text.find("```cuda\n// native source of c0\n```"), std::string::npos);

  // A KernelBench-format run keeps python fences.
  auto kb = GreedyStrategy::Create(Context("cuda"), Templates(), {});
  ASSERT_TRUE(kb.ok());
  EXPECT_EQ((*kb)->Propose()->code_langs, std::vector<std::string>{"python"});

  // Native needs a GPU.
  StrategyContext cpu = Context("cpu");
  cpu.format = "native";
  auto bad = GreedyStrategy::Create(cpu, Templates(), {});
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().kind, ErrorKind::kBadInput);
}

TEST(GreedyStrategyTest, FeedsBackCompileErrorsWithTheFailedSource) {
  auto g = GreedyStrategy::Create(Context(), Templates(), {});
  ASSERT_TRUE(g.ok());
  (*g)->Observe(CompileFailure("c0", 0));
  auto p = (*g)->Propose();
  std::string text = RenderAll(p->prompt);
  EXPECT_NE(text.find("'undeclared_thing' was not declared"), std::string::npos);
  EXPECT_NE(text.find("# broken source of c0"), std::string::npos);
  EXPECT_NE(text.find("No candidate has been accepted yet"), std::string::npos);
  EXPECT_TRUE(p->parent_ids.empty());
}

TEST(GreedyStrategyTest, FeedsBackCorrectnessFailures) {
  auto g = GreedyStrategy::Create(Context(), Templates(), {});
  ASSERT_TRUE(g.ok());
  (*g)->Observe(WrongOutput("c0", 0));
  std::string text = RenderAll((*g)->Propose()->prompt);
  EXPECT_NE(text.find("wrong output (max abs error 6"), std::string::npos);
  EXPECT_NE(text.find("differs at [3, 17]"), std::string::npos);
}

TEST(GreedyStrategyTest, FeedsBackIntegrityFlagsAndNeverRefinesSuspectResults) {
  auto g = GreedyStrategy::Create(Context(), Templates(), {});
  ASSERT_TRUE(g.ok());
  Observation rejected = Accepted("c0", 0, 9.0);
  rejected.eval.accepted = false;
  rejected.eval.verdict = "rejected";
  rejected.eval.speedup_eager.reset();
  rejected.eval.flags.push_back({"torch_compute", "reject", "torch.relu in forward"});
  (*g)->Observe(rejected);
  std::string text = RenderAll((*g)->Propose()->prompt);
  EXPECT_NE(text.find("rejected by the integrity checks (torch_compute)"), std::string::npos);
  EXPECT_NE(text.find("torch.relu in forward"), std::string::npos);

  Observation suspect = Accepted("c1", 1, 80.0);
  suspect.eval.verdict = "suspect";
  suspect.eval.flags.push_back({"suspect_speedup", "warn", "80x"});
  (*g)->Observe(suspect);
  EXPECT_FALSE((*g)->best(0).has_value());
  auto p = (*g)->Propose();
  EXPECT_TRUE(p->parent_ids.empty());
  EXPECT_NE(RenderAll(p->prompt).find("suspect"), std::string::npos);
}

TEST(GreedyStrategyTest, RefinesTheBestAndShowsTimingAndHistory) {
  auto g = GreedyStrategy::Create(Context(), Templates(), {});
  ASSERT_TRUE(g.ok());
  (*g)->Observe(Accepted("c0", 0, 1.5));
  (*g)->Observe(CompileFailure("c1", 1));
  (*g)->Observe(Accepted("c2", 2, 2.5));
  (*g)->Observe(Accepted("c3", 3, 2.0));  // slower: the best stays c2
  ASSERT_TRUE((*g)->best(0).has_value());
  EXPECT_EQ((*g)->best(0)->candidate_id, "c2");
  auto p = (*g)->Propose();
  ASSERT_EQ(p->parent_ids, std::vector<std::string>{"c2"});
  std::string text = RenderAll(p->prompt);
  EXPECT_NE(text.find("# source of c2"), std::string::npos);
  EXPECT_NE(text.find("2.50x faster than eager PyTorch"), std::string::npos);
  EXPECT_NE(text.find("# source of c3"), std::string::npos);  // the last attempt
  EXPECT_NE(text.find("Reference timings: eager PyTorch 10.000 ms"), std::string::npos);
  EXPECT_NE(text.find("iteration 0: correct, 1.50x"), std::string::npos);
  EXPECT_NE(text.find("iteration 1: did not compile"), std::string::npos);
  EXPECT_NE(text.find("current best candidate"), std::string::npos);
}

TEST(GreedyStrategyTest, TiesKeepTheEarlierCandidate) {
  auto g = GreedyStrategy::Create(Context(), Templates(), {});
  ASSERT_TRUE(g.ok());
  (*g)->Observe(Accepted("c0", 0, 2.0));
  (*g)->Observe(Accepted("c1", 1, 2.0));
  EXPECT_EQ((*g)->best(0)->candidate_id, "c0");
}

TEST(GreedyStrategyTest, HistoryIsBounded) {
  GreedyOptions options;
  options.history_items = 2;
  auto g = GreedyStrategy::Create(Context(), Templates(), options);
  ASSERT_TRUE(g.ok());
  for (int i = 0; i < 6; ++i) (*g)->Observe(CompileFailure("c" + std::to_string(i), i));
  std::string text = RenderAll((*g)->Propose()->prompt);
  EXPECT_EQ(text.find("iteration 2:"), std::string::npos);
  EXPECT_NE(text.find("iteration 3:"), std::string::npos);
  EXPECT_NE(text.find("iteration 4:"), std::string::npos);
}

TEST(GreedyStrategyTest, RebuildingFromObservationsGivesTheSamePrompt) {
  auto live = GreedyStrategy::Create(Context(), Templates(), {});
  auto rebuilt = GreedyStrategy::Create(Context(), Templates(), {});
  ASSERT_TRUE(live.ok() && rebuilt.ok());
  std::vector<Observation> seen = {Accepted("c0", 0, 1.2), WrongOutput("c1", 1),
                                   Accepted("c2", 2, 1.7)};
  // Live: proposals interleave with observations.
  for (const Observation& o : seen) {
    auto p = (*live)->Propose();
    (*live)->Settle(p->id,
                    {ProposalOutcome::Kind::kSubmitted, o.candidate_id, o.iteration, {}, ""});
    (*live)->Observe(o);
  }
  for (const Observation& o : seen) (*rebuilt)->Observe(o);
  EXPECT_EQ(RenderAll((*live)->Propose()->prompt), RenderAll((*rebuilt)->Propose()->prompt));
}

TEST(GreedyStrategyTest, IslandsAreIndependentClimbers) {
  StrategyContext c = Context();
  c.islands = 2;
  auto g = GreedyStrategy::Create(c, Templates(), {});
  ASSERT_TRUE(g.ok());
  auto p0 = (*g)->Propose();
  auto p1 = (*g)->Propose();
  EXPECT_EQ(p0->island, 0);
  EXPECT_EQ(p1->island, 1);
  (*g)->Settle(p0->id, {ProposalOutcome::Kind::kSubmitted, "a", 0, {}, ""});
  (*g)->Settle(p1->id, {ProposalOutcome::Kind::kFailed, "", 0, {}, "no code"});
  // Island 1's proposal failed, so it is the least loaded.
  EXPECT_EQ((*g)->Propose()->island, 1);
  Observation a = Accepted("a", 0, 3.0);
  a.island = 0;
  (*g)->Observe(a);
  EXPECT_TRUE((*g)->best(0).has_value());
  EXPECT_FALSE((*g)->best(1).has_value());
}

TEST(GreedyStrategyTest, BrokenTemplateFailsAtCreation) {
  auto t = PromptTemplates::FromMap({{"system", "s"},
                                     {"format_cpu", "f"},
                                     {"policy_strict", "p"},
                                     {"rules", "r"},
                                     {"task", "{{task_name}} {{task_source}}"},
                                     {"hardware", "{{hardware}} {{baseline}}"},
                                     {"answer", "a"},
                                     {"greedy", "{{parent}} {{typo}}"}});
  auto g = GreedyStrategy::Create(Context(), t, {});
  ASSERT_FALSE(g.ok());
  EXPECT_NE(g.error().message.find("typo"), std::string::npos);
}

TEST(BestOfNStrategyTest, EverySampleGetsTheSamePrompt) {
  auto b = BestOfNStrategy::Create(Context(), Templates());
  ASSERT_TRUE(b.ok()) << b.error().message;
  auto p0 = (*b)->Propose();
  (*b)->Observe(Accepted("c0", 0, 2.0));
  (*b)->Observe(CompileFailure("c1", 1));
  auto p1 = (*b)->Propose();
  EXPECT_NE(p0->id, p1->id);
  EXPECT_EQ(p0->stage, "sample");
  EXPECT_TRUE(p1->parent_ids.empty());
  std::string text = RenderAll(p1->prompt);
  EXPECT_EQ(RenderAll(p0->prompt), text);
  EXPECT_NE(text.find("TASK-SOURCE-MARKER"), std::string::npos);
  EXPECT_EQ(text.find("source of c0"), std::string::npos);
  EXPECT_EQ(text.find("Reference timings"), std::string::npos);
}

TEST(AttemptFeedbackTest, CompileErrorsKeepErrorLinesAndTail) {
  std::string log;
  for (int i = 0; i < 200; ++i) log += "noise line " + std::to_string(i) + "\n";
  log += "x.cpp:3:1: error: expected ';'\n  context line\n";
  for (int i = 0; i < 200; ++i) log += "more noise " + std::to_string(i) + "\n";
  std::string out = CompileErrors(log, 4000);
  EXPECT_NE(out.find("error: expected ';'"), std::string::npos);
  EXPECT_NE(out.find("context line"), std::string::npos);
  EXPECT_NE(out.find("more noise 199"), std::string::npos);
  EXPECT_EQ(out.find("noise line 5\n"), std::string::npos);
  EXPECT_LE(CompileErrors(log, 100).size(), 110u);
}

TEST(EvalSummaryTest, ReadsTheContractJson) {
  auto j = nlohmann::json::parse(R"({
    "task": {"name": "t", "degenerate": false},
    "device": {"kind": "cuda", "name": "NVIDIA H100", "index": 0},
    "compiled": true, "compile": {"seconds": 1.0, "cached": false, "log": "LOG"},
    "correct": true,
    "correctness": {"trials": 5, "max_abs_err": 1e-6, "max_rel_err": 2e-6, "detail": null},
    "timing": {"candidate_ms": {"median": 0.41}, "eager_ms": {"median": 0.8}, "compile_ms": null},
    "speedup": {"eager": 1.95, "compile": null},
    "integrity": {"verdict": "suspect", "flags": [{"check": "c", "severity": "warn", "detail": "d"}]},
    "accepted": true, "reward": {"milestone": 2, "speedup_compile": null}, "error": null})");
  auto s = EvalSummary::FromContractJson(j);
  ASSERT_TRUE(s.ok()) << s.error().message;
  EXPECT_TRUE(s->accepted);
  EXPECT_EQ(s->device_name, "NVIDIA H100");
  EXPECT_EQ(s->compile_log, "LOG");
  EXPECT_DOUBLE_EQ(*s->candidate_ms, 0.41);
  EXPECT_FALSE(s->compile_ms.has_value());
  EXPECT_DOUBLE_EQ(*s->speedup_eager, 1.95);
  EXPECT_FALSE(s->speedup_compile.has_value());
  EXPECT_EQ(s->verdict, "suspect");
  ASSERT_EQ(s->flags.size(), 1u);
  EXPECT_EQ(s->flags[0].severity, "warn");
  EXPECT_EQ(s->milestone, 2);

  j["speedup"]["eager"] = "fast";
  EXPECT_FALSE(EvalSummary::FromContractJson(j).ok());
}

// agent: one episode at a time by default (in flight until its submission is
// observed), each brief carrying the skill as its system part and starting
// from the best accepted candidate, which is also the episode's parent.
TEST(AgentStrategyTest, EpisodesStartFromTheBestOneAtATime) {
  auto a = AgentStrategy::Create(Context(), Templates(), "SKILL-MARKER", AgentOptions{});
  ASSERT_TRUE(a.ok()) << a.error().message;
  auto p0 = (*a)->Propose();
  ASSERT_TRUE(p0.has_value());
  EXPECT_EQ(p0->kind, ReplyKind::kAgent);
  EXPECT_EQ(p0->stage, "agent");
  ASSERT_TRUE(p0->agent.has_value());
  EXPECT_EQ(p0->agent->candidate_file, "model_new.py");
  EXPECT_TRUE(p0->agent->initial_source.empty());
  EXPECT_EQ(p0->agent->max_turns, 24);
  EXPECT_TRUE(p0->parent_ids.empty());
  auto messages = p0->prompt.Render();
  ASSERT_EQ(messages.size(), 2u);
  EXPECT_NE(messages[0].content.find("SKILL-MARKER"), std::string::npos);
  EXPECT_NE(messages[1].content.find("TASK-SOURCE-MARKER"), std::string::npos);
  EXPECT_NE(messages[1].content.find("`model_new.py`: it is empty"), std::string::npos);

  EXPECT_FALSE((*a)->Propose().has_value());  // the episode is in flight
  (*a)->Settle(p0->id, {ProposalOutcome::Kind::kSubmitted, "c0", 0, {}, ""});
  EXPECT_FALSE((*a)->Propose().has_value());  // its submission is not evaluated yet
  (*a)->Observe(Accepted("c0", 0, 2.0));
  auto p1 = (*a)->Propose();
  ASSERT_TRUE(p1.has_value());
  EXPECT_EQ(p1->agent->initial_source, "# source of c0\n");
  EXPECT_EQ(p1->parent_ids, std::vector<std::string>{"c0"});
  std::string brief = p1->prompt.Render()[1].content;
  EXPECT_NE(brief.find("holds the current best candidate"), std::string::npos);
  EXPECT_NE(brief.find("iteration 0: "), std::string::npos);

  // An episode without a submission frees its place at once; a failed
  // candidate does not replace the best.
  (*a)->Settle(p1->id, {ProposalOutcome::Kind::kFailed, "", 0, {}, "no submit"});
  auto p2 = (*a)->Propose();
  ASSERT_TRUE(p2.has_value());
  (*a)->Settle(p2->id, {ProposalOutcome::Kind::kSubmitted, "c1", 1, {}, ""});
  (*a)->Observe(CompileFailure("c1", 1));
  EXPECT_EQ((*a)->best()->candidate_id, "c0");
  EXPECT_EQ((*a)->Propose()->parent_ids, std::vector<std::string>{"c0"});
}

TEST(AgentStrategyTest, NativeRunsWorkOnKernelCuAndLimitsComeFromConfig) {
  AgentOptions options;
  options.max_turns = 7;
  options.parallel = 2;
  auto a = AgentStrategy::Create(Context("cuda"), Templates(), "skill", options);
  ASSERT_TRUE(a.ok()) << a.error().message;
  EXPECT_EQ((*a)->candidate_file(), "model_new.py");
  StrategyContext native = Context("cuda");
  native.format = "native";
  auto n = AgentStrategy::Create(native, Templates(), "skill", options);
  ASSERT_TRUE(n.ok()) << n.error().message;
  auto p = (*n)->Propose();
  EXPECT_EQ(p->agent->candidate_file, "kernel.cu");
  EXPECT_EQ(p->agent->max_turns, 7);
  EXPECT_TRUE((*n)->Propose().has_value());  // two at once
  EXPECT_FALSE((*n)->Propose().has_value());
  EXPECT_FALSE(AgentStrategy::Create(Context(), Templates(), "", options).ok());  // no skill
}

}  // namespace
}  // namespace kforge::search
