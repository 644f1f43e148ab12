#include <fmt/format.h>
#include <gtest/gtest.h>

#include "search/adapters/contrastive_strategy.h"
#include "search/adapters/pacevolve_strategy.h"

namespace kforge::search {
namespace {

using nlohmann::json;

std::string RenderAll(const llm::Prompt& p) {
  std::string out;
  for (const llm::ChatMessage& m : p.Render()) out += m.content + "\n";
  return out;
}

StrategyContext Context(int islands = 1) {
  StrategyContext c;
  c.task_name = "fused_bias_relu6_scale";
  c.task_source = "class Model(nn.Module):\n    pass  # TASK-SOURCE-MARKER\n";
  c.device = "cpu";
  c.hardware = "test CPU, 2 cores";
  c.format = "cpp";
  c.policy = "strict";
  c.seed = 7;
  c.islands = islands;
  return c;
}

PromptTemplates Templates() {
  auto t = PromptTemplates::Load(PromptsDir());
  EXPECT_TRUE(t.ok()) << (t.ok() ? "" : t.error().message);
  return std::move(t).value();
}

Observation Evaluated(const std::string& id, int64_t iteration, std::optional<double> speedup,
                      const std::string& verdict = "ok") {
  Observation o;
  o.candidate_id = id;
  o.iteration = iteration;
  o.source = "# source of " + id + "\n";
  o.eval.compiled = true;
  o.eval.correct = o.eval.accepted = speedup.has_value();
  o.eval.verdict = verdict;
  o.eval.eager_ms = 10.0;
  if (speedup) {
    o.eval.candidate_ms = 10.0 / *speedup;
    o.eval.speedup_eager = speedup;
  }
  return o;
}

json Ideas(std::initializer_list<const char*> descriptions) {
  json ideas = json::array();
  for (const char* d : descriptions) ideas.push_back({{"description", d}, {"reasoning", "r"}});
  return {{"ideas", ideas}};
}

ProposalOutcome Structured(json value) {
  ProposalOutcome o;
  o.kind = ProposalOutcome::Kind::kStructured;
  o.value = std::move(value);
  return o;
}

ProposalOutcome Submitted(const std::string& id, int64_t iteration) {
  ProposalOutcome o;
  o.kind = ProposalOutcome::Kind::kSubmitted;
  o.candidate_id = id;
  o.iteration = iteration;
  return o;
}

pacevolve::PacEvolveOptions Options() {
  pacevolve::PacEvolveOptions o;
  o.ideas_per_generation = 2;
  return o;
}

// Answers one pacevolve proposal the way a cooperative model would: two new
// ideas, each classified as new, the first idea selected, code submitted.
// Returns the stage it answered.
std::string Answer(PacEvolveStrategy& s, const Proposal& p, int& next_candidate) {
  if (p.stage == "idea_generation") {
    s.Settle(p.id, Structured(Ideas({"vectorise the loads", "fuse the epilogue"})));
  } else if (p.stage == "classification") {
    s.Settle(
        p.id,
        Structured({{"idea_exists", false}, {"idea_id", nullptr}, {"description", "a new idea"}}));
  } else if (p.stage == "selection") {
    // Every experiment distinct: a failed one would be refused as a known failure.
    int id = s.search().island(p.island).pool.ideas().front().id;
    s.Settle(p.id, Structured({{"idea_id", id},
                               {"experiment", fmt::format("use float4 loads take {}", p.id)}}));
  } else if (p.stage == "implementation") {
    s.Settle(p.id, Submitted("c" + std::to_string(next_candidate), next_candidate));
    ++next_candidate;
  } else {
    ADD_FAILURE() << "unexpected stage " << p.stage;
  }
  return p.stage;
}

// Answers proposals until `until` candidates were submitted in all (bounded).
void ProposeUntilSubmitted(PacEvolveStrategy& s, int& next, int until) {
  for (int guard = 0; next < until; ++guard) {
    ASSERT_LT(guard, 200) << "no candidate after 200 proposals";
    auto p = s.Propose();
    ASSERT_TRUE(p.has_value()) << "stalled after " << next << " candidates";
    Answer(s, *p, next);
  }
}

TEST(PacEvolveStrategyTest, WalksTheStagesWithSchemasAndFeedsEvaluationsBack) {
  auto created = PacEvolveStrategy::Create(Context(), Templates(), Options(), 2000);
  ASSERT_TRUE(created.ok()) << created.error().message;
  PacEvolveStrategy& s = **created;
  int next = 0;
  std::vector<std::string> stages;
  while (next == 0) {
    auto p = s.Propose();
    ASSERT_TRUE(p.has_value());
    if (p->stage == "implementation") {
      EXPECT_EQ(p->kind, ReplyKind::kCode);
      std::string text = RenderAll(p->prompt);
      EXPECT_NE(text.find("use float4 loads"), std::string::npos) << text;
      EXPECT_NE(text.find("TASK-SOURCE-MARKER"), std::string::npos);
    } else {
      EXPECT_EQ(p->kind, ReplyKind::kStructured);
      ASSERT_TRUE(p->schema.has_value());
      EXPECT_EQ(p->schema->name.rfind("pacevolve_", 0), 0u) << p->schema->name;
      EXPECT_TRUE(p->schema->schema.is_object());
    }
    stages.push_back(Answer(s, *p, next));
  }
  EXPECT_EQ(stages, (std::vector<std::string>{"idea_generation", "classification", "classification",
                                              "selection", "implementation"}));
  EXPECT_FALSE(s.Propose().has_value()) << "one island waits for its evaluation";

  std::vector<std::string> types;
  for (const StrategyEvent& e : s.DrainEvents()) types.push_back(e.type);
  EXPECT_EQ(std::count(types.begin(), types.end(), "idea_added"), 2);

  s.Observe(Evaluated("c0", 0, 2.0));
  EXPECT_EQ(s.search().evaluations(), 1);
  auto best = s.search().BestProgram();
  ASSERT_TRUE(best.has_value());
  EXPECT_EQ(best->candidate_id, "c0");
  EXPECT_DOUBLE_EQ(best->runtime_ms, 0.5);  // reference-relative runtime = 1 / speedup
  // The next implementation prompt builds on c0 and shows its speedup.
  std::string prompt;
  for (int guard = 0; guard < 200; ++guard) {
    auto p = s.Propose();
    ASSERT_TRUE(p.has_value());
    if (p->stage == "implementation") {
      prompt = RenderAll(p->prompt);
      EXPECT_EQ(p->parent_ids, std::vector<std::string>{"c0"});
      break;
    }
    Answer(s, *p, next);
  }
  EXPECT_NE(prompt.find("2.00x faster than the reference"), std::string::npos) << prompt;
  EXPECT_NE(prompt.find("# source of c0"), std::string::npos);
}

TEST(PacEvolveStrategyTest, TargetIsTheSolFloorRelativeToEagerFromTheFirstEvaluation) {
  auto created = PacEvolveStrategy::Create(Context(), Templates(), Options(), 2000);
  ASSERT_TRUE(created.ok());
  PacEvolveStrategy& s = **created;
  EXPECT_DOUBLE_EQ(s.search().target_ms(), 0.0);
  int next = 0;
  ProposeUntilSubmitted(s, next, 1);
  (void)s.DrainEvents();
  Observation first = Evaluated("c0", 0, 2.0);
  first.eval.sol_floor_ms = 2.5;  // eager 10 ms: r = 0.25 of the reference's runtime
  s.Observe(first);
  EXPECT_DOUBLE_EQ(s.search().target_ms(), 0.25);
  bool event = false;
  for (const StrategyEvent& e : s.DrainEvents()) {
    if (e.type == "target_set") event = e.detail["source"] == "sol.floor_ms";
  }
  EXPECT_TRUE(event);

  // pacevolve.target_ms overrides the floor (in ms, made relative the same way).
  pacevolve::PacEvolveOptions o = Options();
  o.target_ms = 1.0;
  auto configured = PacEvolveStrategy::Create(Context(), Templates(), o, 2000);
  ASSERT_TRUE(configured.ok());
  next = 0;
  ProposeUntilSubmitted(**configured, next, 1);
  (*configured)->Observe(first);
  EXPECT_DOUBLE_EQ((*configured)->search().target_ms(), 0.1);
}

TEST(PacEvolveStrategyTest, SuspectAndFailedCandidatesAreNotSuccesses) {
  auto created = PacEvolveStrategy::Create(Context(), Templates(), Options(), 2000);
  ASSERT_TRUE(created.ok());
  PacEvolveStrategy& s = **created;
  int next = 0;
  ProposeUntilSubmitted(s, next, 1);
  s.Observe(Evaluated("c0", 0, 50.0, "suspect"));
  EXPECT_FALSE(s.search().BestProgram().has_value());
  ProposeUntilSubmitted(s, next, 2);
  s.Observe(Evaluated("c1", 1, std::nullopt));
  EXPECT_FALSE(s.search().BestProgram().has_value());
  EXPECT_EQ(s.search().evaluations(), 2);
}

TEST(PacEvolveStrategyTest, InvalidStructuredRepliesAreRetriedNotFatal) {
  auto created = PacEvolveStrategy::Create(Context(), Templates(), Options(), 2000);
  ASSERT_TRUE(created.ok());
  PacEvolveStrategy& s = **created;
  auto p = s.Propose();
  ASSERT_TRUE(p && p->stage == "idea_generation");
  s.Settle(p->id, Structured({{"unexpected", 1}}));
  auto again = s.Propose();
  ASSERT_TRUE(again.has_value());
  EXPECT_EQ(again->stage, "idea_generation");
  EXPECT_NE(RenderAll(again->prompt).find("was sent back"), std::string::npos);
  EXPECT_EQ(s.rejected_replies(), 1);
}

TEST(PacEvolveStrategyTest, RestoredStateContinuesTheSameSearch) {
  auto a = PacEvolveStrategy::Create(Context(2), Templates(), Options(), 2000);
  ASSERT_TRUE(a.ok());
  int next = 0;
  // Both islands get a candidate evaluated; island 0's second is in flight.
  ProposeUntilSubmitted(**a, next, 2);
  (*a)->Observe(Evaluated("c0", 0, 1.5));
  (*a)->Observe(Evaluated("c1", 1, 3.0));
  ProposeUntilSubmitted(**a, next, 3);
  std::optional<json> saved = (*a)->SaveState();
  ASSERT_TRUE(saved.has_value());

  auto b = PacEvolveStrategy::Create(Context(2), Templates(), Options(), 2000);
  ASSERT_TRUE(b.ok());
  Status restored = (*b)->RestoreState(json::parse(saved->dump()));
  ASSERT_TRUE(restored.ok()) << restored.error().message;
  // A resumed loop replays every recorded evaluation: those the state holds are ignored.
  (*b)->Observe(Evaluated("c0", 0, 1.5));
  (*b)->Observe(Evaluated("c1", 1, 3.0));
  EXPECT_EQ((*b)->search().evaluations(), 2);
  EXPECT_EQ((*b)->SaveState()->at("search"), saved->at("search"));
  // And both go on identically.
  (*a)->Observe(Evaluated("c2", 2, 4.0));
  (*b)->Observe(Evaluated("c2", 2, 4.0));
  for (int i = 0; i < 6; ++i) {
    auto pa = (*a)->Propose();
    auto pb = (*b)->Propose();
    ASSERT_EQ(pa.has_value(), pb.has_value());
    if (!pa) break;
    EXPECT_EQ(pa->stage, pb->stage);
    EXPECT_EQ(pa->island, pb->island);
    EXPECT_EQ(RenderAll(pa->prompt), RenderAll(pb->prompt));
    int na = next, nb = next;
    Answer(**a, *pa, na);
    Answer(**b, *pb, nb);
    next = na;
  }
  EXPECT_EQ((*a)->SaveState()->at("search"), (*b)->SaveState()->at("search"));
  EXPECT_FALSE((*b)->RestoreState(json{{"version", 99}}).ok());
}

TEST(ContrastiveStrategyTest, ShowsScoredAcceptedVariantsOnly) {
  ContrastiveOptions options;
  options.exemplars = 2;
  auto created = ContrastiveStrategy::Create(Context(), Templates(), options, 2000);
  ASSERT_TRUE(created.ok()) << created.error().message;
  ContrastiveStrategy& s = **created;
  auto first = s.Propose();
  ASSERT_TRUE(first.has_value());
  EXPECT_EQ(first->stage, "contrastive");
  EXPECT_NE(RenderAll(first->prompt).find("No variant has been accepted yet"), std::string::npos);

  s.Observe(Evaluated("c0", 0, 1.2));
  s.Observe(Evaluated("c1", 1, 40.0, "suspect"));
  s.Observe(Evaluated("c2", 2, std::nullopt));
  s.Observe(Evaluated("c3", 3, 2.5));
  EXPECT_EQ(s.exemplars().size(), 2u);
  auto p = s.Propose();
  ASSERT_TRUE(p.has_value());
  std::string text = RenderAll(p->prompt);
  // Two buckets (1.2 and 2.5), both drawn, slowest first.
  EXPECT_EQ(p->parent_ids, (std::vector<std::string>{"c0", "c3"}));
  EXPECT_LT(text.find("# source of c0"), text.find("# source of c3"));
  EXPECT_NE(text.find("score 2.50"), std::string::npos) << text;
  EXPECT_EQ(text.find("# source of c1"), std::string::npos) << "a suspect variant is never shown";
  EXPECT_NE(text.find("Performance Analysis"), std::string::npos);
}

TEST(ContrastiveStrategyTest, DeterministicGivenSeedAndObservations) {
  ContrastiveOptions options;
  options.exemplars = 2;
  auto a = ContrastiveStrategy::Create(Context(), Templates(), options, 2000);
  auto b = ContrastiveStrategy::Create(Context(), Templates(), options, 2000);
  ASSERT_TRUE(a.ok() && b.ok());
  for (int i = 0; i < 12; ++i) {
    Observation o = Evaluated("c" + std::to_string(i), i, 1.0 + 0.37 * i);
    (*a)->Observe(o);
    (*b)->Observe(o);
  }
  for (int i = 0; i < 5; ++i) {
    auto pa = (*a)->Propose();
    auto pb = (*b)->Propose();
    ASSERT_TRUE(pa && pb);
    EXPECT_EQ(pa->parent_ids, pb->parent_ids);
    EXPECT_EQ(pa->parent_ids.size(), 2u);
  }
}

}  // namespace
}  // namespace kforge::search
