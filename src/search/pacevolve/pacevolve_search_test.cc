#include "search/pacevolve/pacevolve_search.h"

#include <gtest/gtest.h>

#include <map>
#include <set>

namespace kforge::search::pacevolve {
namespace {

using nlohmann::json;

// ---------------------------------------------------------------------------
// Helpers: scripted answers to the search's requests (the fake LLM).

PacEvolveOptions OneIsland() {
  PacEvolveOptions o;
  o.islands = 1;
  o.idea_generation_interval = 1000;  // after the first iteration, start at selection
  o.mbb = false;
  return o;
}

PacEvolveSearch Make(const PacEvolveOptions& o, uint64_t seed = 1, double baseline = 10.0,
                     double target = 2.0) {
  Result<PacEvolveSearch> s = PacEvolveSearch::Create(o, baseline, target, seed);
  EXPECT_TRUE(s.ok()) << s.error().message;
  return std::move(*s);
}

// Requests handed out but not answered yet, by island: with several islands
// NextRequest may serve another island than the one a test wants to drive.
struct Pending {
  std::map<int, StageRequest> by_island;

  StageRequest For(PacEvolveSearch& s, int island) {
    auto it = by_island.find(island);
    if (it != by_island.end()) {
      StageRequest r = it->second;
      by_island.erase(it);
      return r;
    }
    for (int i = 0; i < 2 * s.num_islands(); ++i) {
      std::optional<StageRequest> r = s.NextRequest();
      if (!r) break;
      if (r->island == island) return *r;
      by_island[r->island] = *r;
    }
    ADD_FAILURE() << "no request for island " << island;
    return {};
  }
};

void ExpectVerdict(const Result<ReplyResult>& r, ReplyVerdict v) {
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->verdict, v) << r->reason;
}

EvaluationOutcome Accepted(double ms, std::string source = "src") {
  EvaluationOutcome o;
  o.accepted = true;
  o.runtime_ms = ms;
  o.source = std::move(source);
  return o;
}

EvaluationOutcome Rejected(std::string why = "compile error: missing ;") {
  EvaluationOutcome o;
  o.summary = std::move(why);
  return o;
}

struct Driver {
  explicit Driver(PacEvolveSearch& search, int island_index = 0, Pending* shared_pending = nullptr)
      : s(search), island(island_index), shared(shared_pending) {}

  PacEvolveSearch& s;
  int island;
  Pending* shared;  // several drivers of one search must share it
  Pending own;

  StageRequest Expect(StageKind stage) {
    StageRequest r = (shared ? *shared : own).For(s, island);
    EXPECT_EQ(r.stage, stage) << "got " << StageName(r.stage);
    return r;
  }
  void Ideas(std::vector<std::string> descriptions) {
    StageRequest r = Expect(StageKind::kIdeaGeneration);
    IdeaGenerationReply reply;
    for (std::string& d : descriptions) reply.ideas.push_back({std::move(d), "because"});
    ExpectVerdict(s.ObserveIdeas(r.id, reply), ReplyVerdict::kAccepted);
  }
  void ClassifyNew() {
    StageRequest r = Expect(StageKind::kClassification);
    ExpectVerdict(s.ObserveClassification(r.id, {false, std::nullopt, ""}),
                  ReplyVerdict::kAccepted);
  }
  void Select(int idea, std::string experiment) {
    StageRequest r = Expect(StageKind::kSelection);
    ExpectVerdict(s.ObserveSelection(r.id, {idea, std::move(experiment)}), ReplyVerdict::kAccepted);
  }
  StageRequest Implement(const std::string& candidate, const EvaluationOutcome& outcome) {
    StageRequest r = Expect(StageKind::kImplementation);
    EXPECT_TRUE(s.ObserveSubmitted(r.id, candidate).ok());
    EXPECT_TRUE(s.ObserveEvaluation(candidate, outcome).ok());
    return r;
  }
};

std::vector<SearchEvent> EventsOfType(const std::vector<SearchEvent>& events,
                                      const std::string& type) {
  std::vector<SearchEvent> out;
  for (const SearchEvent& e : events) {
    if (e.type == type) out.push_back(e);
  }
  return out;
}

// ---------------------------------------------------------------------------
// HCM

TEST(PacEvolveSearchTest, OneIterationGoesThroughEveryStage) {
  PacEvolveSearch s = Make(OneIsland());
  Driver d{s};

  StageRequest gen = d.Expect(StageKind::kIdeaGeneration);
  EXPECT_EQ(gen.ideas_wanted, 3);
  EXPECT_EQ(gen.schema_name, "pacevolve_idea_generation");
  EXPECT_TRUE(gen.ideas.empty());
  EXPECT_TRUE(gen.parent.candidate_id.empty());  // the reference program
  EXPECT_DOUBLE_EQ(gen.parent.runtime_ms, 10.0);
  EXPECT_FALSE(s.NextRequest().has_value());  // one island, one request in flight
  IdeaGenerationReply ideas;
  ideas.ideas = {{"Tile the reduction in shared memory.", "less traffic"},
                 {"Tile the reduction with 64-wide blocks.", "occupancy"}};
  ExpectVerdict(s.ObserveIdeas(gen.id, ideas), ReplyVerdict::kAccepted);

  StageRequest c1 = d.Expect(StageKind::kClassification);
  EXPECT_EQ(c1.proposal->description, "Tile the reduction in shared memory.");
  ExpectVerdict(s.ObserveClassification(c1.id, {false, std::nullopt, ""}), ReplyVerdict::kAccepted);
  StageRequest c2 = d.Expect(StageKind::kClassification);
  ASSERT_EQ(c2.ideas.size(), 1u);
  EXPECT_EQ(c2.ideas[0].id, 1);
  ExpectVerdict(s.ObserveClassification(
                    c2.id, {true, 1, "Tile the reduction in shared memory, 64-wide blocks."}),
                ReplyVerdict::kAccepted);

  StageRequest sel = d.Expect(StageKind::kSelection);
  EXPECT_EQ(sel.schema_name, "pacevolve_idea_selection");
  // An id that is not in the pool is sent back and asked again.
  Result<ReplyResult> bad = s.ObserveSelection(sel.id, {7, "block 64"});
  ExpectVerdict(bad, ReplyVerdict::kRetry);
  EXPECT_NE(bad->reason.find("choose one of: 1"), std::string::npos);
  StageRequest sel2 = d.Expect(StageKind::kSelection);
  EXPECT_EQ(sel2.attempt, 1);
  EXPECT_EQ(sel2.retry_reason, bad->reason);
  ExpectVerdict(s.ObserveSelection(sel2.id, {1, "block 64, two stages"}), ReplyVerdict::kAccepted);

  StageRequest impl = d.Expect(StageKind::kImplementation);
  EXPECT_EQ(impl.idea_id, 1);
  EXPECT_EQ(impl.experiment, "block 64, two stages");
  EXPECT_TRUE(impl.schema.is_null());
  EXPECT_EQ(impl.attempt, 0);
  ASSERT_TRUE(s.ObserveSubmitted(impl.id, "cand-1").ok());
  EXPECT_FALSE(s.NextRequest().has_value());  // waiting for the evaluation
  EXPECT_EQ(s.PendingEvaluations(), (std::vector<std::pair<int, std::string>>{{0, "cand-1"}}));
  ASSERT_TRUE(s.ObserveEvaluation("cand-1", Accepted(7.5, "fast kernel")).ok());

  const Idea& idea = s.island(0).pool.ideas()[0];
  EXPECT_EQ(idea.description, "Tile the reduction in shared memory, 64-wide blocks.");
  ASSERT_EQ(idea.hypotheses.size(), 1u);
  EXPECT_EQ(idea.hypotheses[0].description, "block 64, two stages");
  EXPECT_EQ(idea.hypotheses[0].runtime_ms, 7.5);
  EXPECT_EQ(idea.best_candidate_id, "cand-1");
  ASSERT_TRUE(s.BestProgram().has_value());
  EXPECT_EQ(s.BestProgram()->source, "fast kernel");
  EXPECT_EQ(s.island(0).exemplars.size(), 1u);
  EXPECT_EQ(s.island(0).trajectory.size(), 2u);  // initial + end of iteration 1
  EXPECT_EQ(s.failure_log().size(), 0u);         // it improved
  EXPECT_EQ(s.evaluations(), 1);

  const std::vector<SearchEvent> events = s.DrainEvents();
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0].type, "idea_added");
  EXPECT_EQ(events[0].detail["idea_id"], 1);
  EXPECT_EQ(events[1].type, "idea_merged");
  EXPECT_EQ(events[1].detail["previous_description"], "Tile the reduction in shared memory.");
  EXPECT_TRUE(s.DrainEvents().empty());

  // The next iteration edits the new best and shows it as an exemplar.
  StageRequest next = d.Expect(StageKind::kSelection);
  EXPECT_EQ(next.parent.candidate_id, "cand-1");
  ASSERT_EQ(next.exemplars.size(), 1u);
  EXPECT_EQ(next.exemplars[0].source, "fast kernel");
  EXPECT_NEAR(next.exemplars[0].score, 10.0 / 7.5, 1e-12);  // speedup over the baseline
}

TEST(PacEvolveSearchTest, MergedDescriptionsHaveAtMostTwoSentences) {
  PacEvolveSearch s = Make(OneIsland());
  Driver d{s};
  d.Ideas({"Fuse the epilogue.", "Fuse bias too."});
  d.ClassifyNew();
  StageRequest c = d.Expect(StageKind::kClassification);
  Result<ReplyResult> r = s.ObserveClassification(
      c.id, {true, 1, "Fuse the epilogue. Also the bias. And the activation."});
  ExpectVerdict(r, ReplyVerdict::kRetry);
  EXPECT_NE(r->reason.find("3 sentences"), std::string::npos);
  c = d.Expect(StageKind::kClassification);
  EXPECT_EQ(c.attempt, 1);
  ExpectVerdict(s.ObserveClassification(c.id, {true, 1, "Fuse the epilogue, bias included."}),
                ReplyVerdict::kAccepted);
  EXPECT_EQ(s.island(0).pool.ideas()[0].description, "Fuse the epilogue, bias included.");
}

TEST(PacEvolveSearchTest, KnownFailuresAreNotRetried) {
  PacEvolveSearch s = Make(OneIsland());
  Driver d{s};
  d.Ideas({"Vectorise loads."});
  d.ClassifyNew();
  d.Select(1, "Use float4 loads in the inner loop.");
  d.Implement("c1", Rejected("incorrect: max_abs_err 0.3"));
  ASSERT_EQ(s.failure_log().size(), 1u);
  EXPECT_EQ(s.failure_log().entries()[0].kind, FailureKind::kRejectedHypothesis);
  EXPECT_NE(s.failure_log().entries()[0].reason.find("incorrect"), std::string::npos);

  StageRequest sel = d.Expect(StageKind::kSelection);
  ASSERT_EQ(sel.failures.size(), 1u);  // the log is in the prompt context
  Result<ReplyResult> r = s.ObserveSelection(sel.id, {1, "use FLOAT4 loads in the inner loop"});
  ExpectVerdict(r, ReplyVerdict::kRetry);
  EXPECT_NE(r->reason.find("already tried"), std::string::npos);
  EXPECT_EQ(EventsOfType(s.DrainEvents(), "hypothesis_rejected").size(), 1u);

  // An accepted candidate that is not faster is a failure too.
  d.Select(1, "Use float2 loads.");
  d.Implement("c2", Accepted(11.0));
  ASSERT_EQ(s.failure_log().size(), 2u);
  EXPECT_NE(s.failure_log().entries()[1].reason.find("no improvement"), std::string::npos);
  EXPECT_EQ(s.failure_log().entries()[1].runtime_ms, 11.0);
}

TEST(PacEvolveSearchTest, SummarisationTriggersAboveKHyp) {
  PacEvolveOptions o = OneIsland();
  o.max_hypotheses = 2;
  PacEvolveSearch s = Make(o);
  Driver d{s};
  d.Ideas({"Tune the block size."});
  d.ClassifyNew();
  for (int i = 0; i < 3; ++i) {
    d.Select(1, "block " + std::to_string(64 << i));
    d.Implement("c" + std::to_string(i), Accepted(9.0 - i));
  }
  StageRequest sum = d.Expect(StageKind::kSummarization);
  EXPECT_EQ(sum.idea_id, 1);
  EXPECT_EQ(sum.ideas[0].hypotheses.size(), 3u);
  EXPECT_EQ(sum.schema_name, "pacevolve_hypothesis_summary");
  ExpectVerdict(s.ObserveSummary(sum.id, {"Bigger blocks help; best 7 ms at 256."}),
                ReplyVerdict::kAccepted);
  const Idea& idea = s.island(0).pool.ideas()[0];
  EXPECT_TRUE(idea.hypotheses.empty());
  EXPECT_EQ(idea.summarized_hypotheses, 3);
  EXPECT_EQ(idea.key_findings, "Bigger blocks help; best 7 ms at 256.");
  const std::vector<SearchEvent> summarized =
      EventsOfType(s.DrainEvents(), "hypotheses_summarized");
  ASSERT_EQ(summarized.size(), 1u);
  EXPECT_EQ(summarized[0].detail["hypotheses"], 3);
  EXPECT_EQ(summarized[0].iteration, 3);
  // The snapshot is taken after the summary.
  EXPECT_TRUE(s.island(0).trajectory.back().pool.ideas()[0].hypotheses.empty());
  d.Expect(StageKind::kSelection);
}

TEST(PacEvolveSearchTest, PruningTriggersAboveKIdeaAndPrunedIdeasStayOut) {
  PacEvolveOptions o = OneIsland();
  o.max_ideas = 2;
  o.idea_generation_interval = 1;
  PacEvolveSearch s = Make(o);
  Driver d{s};
  d.Ideas({"idea one", "idea two", "idea three"});
  d.ClassifyNew();
  d.ClassifyNew();
  d.ClassifyNew();
  d.Select(2, "exp");
  d.Implement("c1", Accepted(9.0));

  StageRequest prune = d.Expect(StageKind::kPruning);
  EXPECT_EQ(prune.max_ideas, 2);
  EXPECT_EQ(prune.ideas.size(), 3u);
  ExpectVerdict(s.ObservePruning(prune.id, {{9}, "x"}), ReplyVerdict::kRetry);
  prune = d.Expect(StageKind::kPruning);
  ExpectVerdict(s.ObservePruning(prune.id, {{}, "keep all"}), ReplyVerdict::kRetry);
  prune = d.Expect(StageKind::kPruning);
  ExpectVerdict(s.ObservePruning(prune.id, {{3}, "untested and similar to one"}),
                ReplyVerdict::kAccepted);
  EXPECT_EQ(s.island(0).pool.size(), 2u);
  EXPECT_FALSE(s.island(0).pool.Contains(3));
  const std::vector<SearchEvent> pruned = EventsOfType(s.DrainEvents(), "idea_pruned");
  ASSERT_EQ(pruned.size(), 1u);
  EXPECT_EQ(pruned[0].detail["description"], "idea three");
  EXPECT_EQ(pruned[0].detail["fallback"], false);
  ASSERT_EQ(s.failure_log().size(), 1u);
  EXPECT_EQ(s.failure_log().entries()[0].kind, FailureKind::kPrunedIdea);

  // Proposing the pruned idea again: the classifier calls it new, the log says no.
  d.Ideas({"Idea three!"});
  d.ClassifyNew();
  EXPECT_EQ(s.island(0).pool.size(), 2u);
  const std::vector<SearchEvent> rejected = EventsOfType(s.DrainEvents(), "idea_rejected");
  ASSERT_EQ(rejected.size(), 1u);
  EXPECT_EQ(rejected[0].detail["matches"], "idea three");
  d.Expect(StageKind::kSelection);
}

TEST(PacEvolveSearchTest, PruningFallsBackToTheRankingAfterTheRetries) {
  PacEvolveOptions o = OneIsland();
  o.max_ideas = 1;
  o.stage_retries = 0;
  PacEvolveSearch s = Make(o);
  Driver d{s};
  d.Ideas({"slow idea", "fast idea"});
  d.ClassifyNew();
  d.ClassifyNew();
  d.Select(2, "try fast");
  d.Implement("c1", Accepted(5.0));
  StageRequest prune = d.Expect(StageKind::kPruning);
  ExpectVerdict(s.ObservePruning(prune.id, {{42}, "?"}), ReplyVerdict::kGaveUp);
  // Idea 2 has an accepted result, idea 1 none: idea 1 goes.
  ASSERT_EQ(s.island(0).pool.size(), 1u);
  EXPECT_TRUE(s.island(0).pool.Contains(2));
  const std::vector<SearchEvent> pruned = EventsOfType(s.DrainEvents(), "idea_pruned");
  ASSERT_EQ(pruned.size(), 1u);
  EXPECT_EQ(pruned[0].detail["fallback"], true);
  d.Expect(StageKind::kSelection);
}

TEST(PacEvolveSearchTest, StageFailuresAreRetriedThenGivenUp) {
  PacEvolveOptions o = OneIsland();
  o.stage_retries = 1;
  PacEvolveSearch s = Make(o);
  Driver d{s};
  d.Ideas({"idea"});
  d.ClassifyNew();
  d.Select(1, "exp one");
  StageRequest impl = d.Expect(StageKind::kImplementation);
  ExpectVerdict(s.ObserveStageFailure(impl.id, "no code block"), ReplyVerdict::kRetry);
  impl = d.Expect(StageKind::kImplementation);
  EXPECT_EQ(impl.retry_reason, "no code block");
  ExpectVerdict(s.ObserveStageFailure(impl.id, "no code block"), ReplyVerdict::kGaveUp);
  // A fresh iteration (generation 0 again, so it starts with new ideas);
  // nothing was evaluated or recorded.
  StageRequest next = d.Expect(StageKind::kIdeaGeneration);
  EXPECT_EQ(next.attempt, 0);
  EXPECT_EQ(s.evaluations(), 0);
  EXPECT_TRUE(s.island(0).pool.ideas()[0].hypotheses.empty());
  EXPECT_EQ(s.ObserveStageFailure(next.id + 100, "x").error().kind, ErrorKind::kNotFound);
}

TEST(PacEvolveSearchTest, MisuseIsAnError) {
  PacEvolveSearch s = Make(OneIsland());
  Driver d{s};
  StageRequest gen = d.Expect(StageKind::kIdeaGeneration);
  EXPECT_EQ(s.ObserveSelection(gen.id, {1, "x"}).error().kind, ErrorKind::kBadInput);
  EXPECT_EQ(s.ObserveIdeas(gen.id + 1, {}).error().kind, ErrorKind::kNotFound);
  EXPECT_EQ(s.ObserveEvaluation("nobody", Accepted(1.0)).error().kind, ErrorKind::kNotFound);
}

// ---------------------------------------------------------------------------
// MBB and CE

PacEvolveOptions FastTrigger(int islands) {
  PacEvolveOptions o;
  o.islands = islands;
  o.idea_generation_interval = 1000;
  o.freeze_iterations = 2;
  o.momentum_beta = 0.5;
  o.stagnation_threshold = 0.3;
  return o;
}

TEST(PacEvolveSearchTest, BacktrackRestoresAnEarlierSnapshot) {
  // m: 1 → 0.625 (R = 0.25) → 0.479 (R = 1/3) → 0.240 (rejected) < 0.3 after
  // the freeze of 2 generations: the third evaluation triggers a backtrack.
  std::set<size_t> restored_states;
  for (uint64_t seed = 1; seed <= 40; ++seed) {
    PacEvolveSearch s = Make(FastTrigger(1), seed);
    Driver d{s};
    d.Ideas({"Tile it."});
    d.ClassifyNew();
    d.Select(1, "tile 32");
    d.Implement("c1", Accepted(8.0));
    d.Select(1, "tile 64");
    d.Implement("c2", Accepted(6.0));
    d.Select(1, "tile 128");
    const json before = s.ToJson()["islands"][0]["trajectory"];
    ASSERT_EQ(before.size(), 3u);
    s.DrainEvents();
    d.Implement("c3", Rejected());

    const std::vector<SearchEvent> bt = EventsOfType(s.DrainEvents(), "backtrack");
    ASSERT_EQ(bt.size(), 1u) << "seed " << seed;
    const size_t k = bt[0].detail["to_state"].get<size_t>();
    ASSERT_LT(k, 3u);
    restored_states.insert(k);
    EXPECT_EQ(bt[0].detail["states"], 3);
    EXPECT_EQ(bt[0].detail["from_generation"], 3);
    EXPECT_DOUBLE_EQ(bt[0].detail["state_probability"].get<double>(),
                     BacktrackDistribution(3, 1.5)[k]);

    const IslandState& is = s.island(0);
    const json& snap = before[k];
    EXPECT_EQ(is.pool.ToJson()["ideas"], snap["pool"]["ideas"]);
    EXPECT_EQ(is.exemplars.size(), snap["exemplar_count"].get<size_t>());
    EXPECT_EQ(is.best_candidate_id, snap["best_candidate_id"].get<std::string>());
    EXPECT_DOUBLE_EQ(is.best_runtime_ms, snap["best_runtime_ms"].get<double>());
    EXPECT_DOUBLE_EQ(is.momentum.momentum(), 1.0);
    EXPECT_DOUBLE_EQ(is.momentum.best(), is.best_runtime_ms);
    EXPECT_EQ(is.trajectory.size(), k + 1);
    EXPECT_EQ(is.backtracks, 1);
    EXPECT_EQ(is.last_intervention, 3);
    // The best ever and the permanent log survive the backtrack.
    EXPECT_EQ(is.best_ever_candidate_id, "c2");
    EXPECT_EQ(s.BestProgram()->candidate_id, "c2");
    EXPECT_EQ(s.failure_log().size(), 1u);

    // The island continues from the restored state.
    StageRequest next = d.Expect(k == 0 ? StageKind::kIdeaGeneration : StageKind::kSelection);
    EXPECT_EQ(next.parent.candidate_id, is.best_candidate_id);
    if (k == 0) {
      IdeaGenerationReply r;
      r.ideas = {{"Tile it again.", ""}};
      ExpectVerdict(s.ObserveIdeas(next.id, r), ReplyVerdict::kAccepted);
      d.ClassifyNew();
      EXPECT_EQ(s.island(0).pool.ideas()[0].id, 2);  // ids are not reused
    }
  }
  // The power law reached more than one earlier state over the seeds.
  EXPECT_GE(restored_states.size(), 2u);
}

TEST(PacEvolveSearchTest, NoInterventionDuringTheFreeze) {
  PacEvolveOptions o = FastTrigger(1);
  o.freeze_iterations = 5;
  PacEvolveSearch s = Make(o);
  Driver d{s};
  d.Ideas({"idea"});
  d.ClassifyNew();
  for (int i = 0; i < 5; ++i) {
    d.Select(1, "exp " + std::to_string(i));
    d.Implement("c" + std::to_string(i), Rejected());
  }
  EXPECT_EQ(s.island(0).backtracks, 0);  // m = 0.5^5 but only 5 generations
  d.Select(1, "exp 5");
  d.Implement("c5", Rejected());
  EXPECT_EQ(s.island(0).backtracks, 1);  // generation 6 > freeze 5
}

TEST(PacEvolveSearchTest, AnIslandThatCanOnlyRepeatFailuresIntervenes) {
  for (bool mbb : {true, false}) {
    PacEvolveOptions o = OneIsland();
    o.mbb = mbb;
    o.freeze_iterations = 100;  // the momentum trigger stays out of the way
    o.fruitless_limit = 1;
    o.stage_retries = 0;
    PacEvolveSearch s = Make(o);
    Driver d{s};
    d.Ideas({"idea"});
    d.ClassifyNew();
    d.Select(1, "exp A");
    d.Implement("c1", Rejected());
    s.DrainEvents();
    StageRequest sel = d.Expect(StageKind::kSelection);
    ExpectVerdict(s.ObserveSelection(sel.id, {1, "exp A"}), ReplyVerdict::kGaveUp);
    const std::vector<SearchEvent> bt = EventsOfType(s.DrainEvents(), "backtrack");
    if (mbb) {
      ASSERT_EQ(bt.size(), 1u);
      EXPECT_EQ(bt[0].detail["trigger"], "fruitless");
      EXPECT_EQ(s.island(0).backtracks, 1);
    } else {
      EXPECT_TRUE(bt.empty());
      EXPECT_EQ(s.island(0).fruitless_iterations, 1);
    }
  }
}

// Island 1 reaches the target (A_1 = 1) while island 0 fails twice (A_0 = 0):
// S = 0, w_BT = 0, w_C1 = 1, so island 0 must cross over to island 1.
void RunCrossoverScenario(PacEvolveSearch& s, Pending& pending) {
  Driver d0{s, 0, &pending};
  Driver d1{s, 1, &pending};
  d1.Ideas({"Use tensor cores."});
  d1.ClassifyNew();
  d1.Select(1, "mma.sync 16x8x16");
  d1.Implement("b1", Accepted(2.0, "tensor core kernel"));
  d0.Ideas({"Unroll the loop."});
  d0.ClassifyNew();
  d0.Select(1, "unroll 4");
  d0.Implement("a1", Rejected());
  d0.Select(1, "unroll 8");
  d0.Implement("a2", Rejected());
}

TEST(PacEvolveSearchTest, CrossoverBringsThePartnersBestProgramAndTopIdeas) {
  PacEvolveOptions o = FastTrigger(2);
  o.freeze_iterations = 1;
  PacEvolveSearch s = Make(o);
  Pending pending;
  RunCrossoverScenario(s, pending);

  const std::vector<SearchEvent> events = s.DrainEvents();
  const std::vector<SearchEvent> cross = EventsOfType(events, "crossover");
  ASSERT_EQ(cross.size(), 1u);
  EXPECT_EQ(cross[0].island, 0);
  EXPECT_EQ(cross[0].detail["partner"], 1);
  EXPECT_EQ(cross[0].detail["adopted_as_best"], true);
  EXPECT_DOUBLE_EQ(cross[0].detail["action_probability"].get<double>(), 1.0);
  EXPECT_EQ(cross[0].detail["absolute_progress"], json::array({0.0, 1.0}));
  EXPECT_TRUE(EventsOfType(events, "backtrack").empty());

  const IslandState& is = s.island(0);
  EXPECT_EQ(is.crossovers, 1);
  EXPECT_EQ(is.best_candidate_id, "b1");
  EXPECT_DOUBLE_EQ(is.momentum.momentum(), 1.0);
  EXPECT_NE(is.exemplars.Find("b1"), nullptr);
  EXPECT_EQ(cross[0].detail["offered_ideas"], json::array({1}));

  // The partner's idea is offered to classification like any proposal.
  Driver d0{s, 0, &pending};
  StageRequest c = d0.Expect(StageKind::kClassification);
  EXPECT_EQ(c.proposal->description, "Use tensor cores.");
  ASSERT_EQ(is.pool.size(), 1u);
  ExpectVerdict(s.ObserveClassification(c.id, {false, std::nullopt, "Use tensor cores (mma)."}),
                ReplyVerdict::kAccepted);
  ASSERT_EQ(is.pool.size(), 2u);
  const Idea& imported = is.pool.ideas()[1];
  EXPECT_EQ(imported.description, "Use tensor cores (mma).");
  EXPECT_EQ(imported.origin_island, 1);
  EXPECT_EQ(imported.best_candidate_id, "b1");
  ASSERT_EQ(imported.hypotheses.size(), 1u);  // its record comes along
  EXPECT_EQ(imported.hypotheses[0].description, "mma.sync 16x8x16");
  const std::vector<SearchEvent> added = EventsOfType(s.DrainEvents(), "idea_added");
  ASSERT_EQ(added.size(), 1u);
  EXPECT_EQ(added[0].detail["origin_island"], 1);
  EXPECT_EQ(is.trajectory.size(), 3u);  // initial, iteration 1, the crossover iteration

  // The next implementation on island 0 edits the partner's program.
  d0.Select(imported.id, "mma with a 3-stage pipeline");
  StageRequest impl = d0.Expect(StageKind::kImplementation);
  EXPECT_EQ(impl.parent.candidate_id, "b1");
  EXPECT_EQ(impl.parent.source, "tensor core kernel");
}

TEST(PacEvolveSearchTest, AnOfferedIdeaThePoolAlreadyHoldsRefinesIt) {
  PacEvolveOptions o = FastTrigger(2);
  o.freeze_iterations = 1;
  PacEvolveSearch s = Make(o);
  Pending pending;
  RunCrossoverScenario(s, pending);
  s.DrainEvents();
  Driver d0{s, 0, &pending};
  StageRequest c = d0.Expect(StageKind::kClassification);
  ExpectVerdict(s.ObserveClassification(c.id, {true, 1, "Unroll the loop or use tensor cores."}),
                ReplyVerdict::kAccepted);
  EXPECT_EQ(s.island(0).pool.size(), 1u);
  const std::vector<SearchEvent> merged = EventsOfType(s.DrainEvents(), "idea_merged");
  ASSERT_EQ(merged.size(), 1u);
  EXPECT_EQ(merged[0].detail["origin_island"], 1);
  d0.Expect(StageKind::kSelection);
}

TEST(PacEvolveSearchTest, WithoutCeAStagnantIslandBacktracks) {
  PacEvolveOptions o = FastTrigger(2);
  o.freeze_iterations = 1;
  o.ce = false;
  PacEvolveSearch s = Make(o);
  Pending pending;
  RunCrossoverScenario(s, pending);
  const std::vector<SearchEvent> events = s.DrainEvents();
  EXPECT_TRUE(EventsOfType(events, "crossover").empty());
  ASSERT_EQ(EventsOfType(events, "backtrack").size(), 1u);
  EXPECT_EQ(s.island(0).backtracks, 1);
}

TEST(PacEvolveSearchTest, WithoutMbbNothingIntervenes) {
  PacEvolveOptions o = FastTrigger(1);
  o.mbb = false;
  o.freeze_iterations = 0;
  o.stagnation_threshold = 0.99;
  PacEvolveSearch s = Make(o);
  Driver d{s};
  d.Ideas({"idea"});
  d.ClassifyNew();
  for (int i = 0; i < 10; ++i) {
    d.Select(1, "exp " + std::to_string(i));
    d.Implement("c" + std::to_string(i), Rejected());
  }
  EXPECT_EQ(s.island(0).backtracks, 0);
  EXPECT_TRUE(EventsOfType(s.DrainEvents(), "backtrack").empty());
  EXPECT_LT(s.island(0).momentum.momentum(), 0.01);  // it is stagnant, just not acting
}

TEST(PacEvolveSearchTest, WithoutHcmEachIterationIsOneCodeCallWithAFlatHistory) {
  PacEvolveOptions o = OneIsland();
  o.hcm = false;
  PacEvolveSearch s = Make(o);
  Driver d{s};
  EvaluationOutcome first = Accepted(8.0);
  first.description = "1. tile by 64";
  StageRequest r = d.Implement("c1", first);
  EXPECT_TRUE(r.history.empty());
  EXPECT_TRUE(r.ideas.empty());
  EvaluationOutcome second = Rejected();
  second.description = "2. tile by 128";
  r = d.Implement("c2", second);
  ASSERT_EQ(r.history.size(), 1u);
  EXPECT_EQ(r.history[0].description, "1. tile by 64");
  r = d.Expect(StageKind::kImplementation);
  ASSERT_EQ(r.history.size(), 2u);  // append-only, never summarised
  EXPECT_EQ(r.history[1].outcome, "compile error: missing ;");
  EXPECT_EQ(s.failure_log().size(), 0u);
  EXPECT_TRUE(s.DrainEvents().empty());
}

// ---------------------------------------------------------------------------
// Whole runs: a generic fake LLM answering whatever is asked.

struct FakeLlm {
  Rng rng{99};
  int counter = 0;

  // Answers one request; evaluates implementations at once.
  void Answer(PacEvolveSearch& s, const StageRequest& r) {
    ++counter;
    switch (r.stage) {
      case StageKind::kIdeaGeneration: {
        IdeaGenerationReply reply;
        for (int i = 0; i < r.ideas_wanted; ++i) {
          reply.ideas.push_back({"idea " + std::to_string(rng.UniformIndex(8)), "why"});
        }
        (void)s.ObserveIdeas(r.id, reply);
        break;
      }
      case StageKind::kClassification: {
        for (const Idea& idea : r.ideas) {
          if (idea.description == r.proposal->description) {
            (void)s.ObserveClassification(r.id, {true, idea.id, idea.description});
            return;
          }
        }
        (void)s.ObserveClassification(r.id, {false, std::nullopt, r.proposal->description});
        break;
      }
      case StageKind::kSelection: {
        const Idea& idea = r.ideas[rng.UniformIndex(r.ideas.size())];
        (void)s.ObserveSelection(r.id, {idea.id, "exp " + std::to_string(counter)});
        break;
      }
      case StageKind::kImplementation: {
        const std::string id = "cand-" + std::to_string(counter);
        (void)s.ObserveSubmitted(r.id, id);
        EvaluationOutcome o;
        if (rng.Uniform() < 0.7) {
          o.accepted = true;
          o.runtime_ms = r.parent.runtime_ms * (0.8 + 0.4 * rng.Uniform());
          o.source = "code " + id;
        }
        (void)s.ObserveEvaluation(id, o);
        break;
      }
      case StageKind::kSummarization:
        (void)s.ObserveSummary(r.id, {"findings " + std::to_string(counter)});
        break;
      case StageKind::kPruning: {
        std::vector<int> drop;
        for (size_t i = 0; i + r.max_ideas < r.ideas.size(); ++i) drop.push_back(r.ideas[i].id);
        (void)s.ObservePruning(r.id, {drop, "oldest"});
        break;
      }
    }
  }

  void Run(PacEvolveSearch& s, int64_t evaluations) {
    while (s.evaluations() < evaluations) {
      std::optional<StageRequest> r = s.NextRequest();
      ASSERT_TRUE(r.has_value());
      Answer(s, *r);
    }
  }
};

PacEvolveOptions Busy() {
  PacEvolveOptions o;
  o.islands = 3;
  o.freeze_iterations = 3;
  o.stagnation_threshold = 0.2;
  o.momentum_beta = 0.7;
  o.max_ideas = 3;
  o.max_hypotheses = 2;
  o.failure_match_threshold = 1.0;
  return o;
}

TEST(PacEvolveSearchTest, RunsAreDeterministicAndServeIslandsInTurn) {
  PacEvolveSearch a = Make(Busy(), 7);
  PacEvolveSearch b = Make(Busy(), 7);
  // Round robin: the first three requests go to islands 0, 1, 2.
  FakeLlm la, lb;
  for (int i = 0; i < 3; ++i) {
    std::optional<StageRequest> r = a.NextRequest();
    ASSERT_TRUE(r);
    EXPECT_EQ(r->island, i);
    la.Answer(a, *r);
  }
  for (int i = 0; i < 3; ++i) lb.Answer(b, *b.NextRequest());
  la.Run(a, 120);
  lb.Run(b, 120);
  EXPECT_EQ(a.ToJson(), b.ToJson());

  // Every mechanism fired somewhere in this run.
  int backtracks = 0, crossovers = 0;
  for (int i = 0; i < a.num_islands(); ++i) {
    backtracks += a.island(i).backtracks;
    crossovers += a.island(i).crossovers;
  }
  EXPECT_GT(backtracks + crossovers, 0);
  std::set<std::string> types;
  for (const SearchEvent& e : a.DrainEvents()) types.insert(e.type);
  for (const char* t : {"idea_added", "idea_merged", "idea_pruned", "hypotheses_summarized"}) {
    EXPECT_TRUE(types.count(t)) << t;
  }
}

TEST(PacEvolveSearchTest, ResumeFromJsonContinuesIdentically) {
  PacEvolveSearch a = Make(Busy(), 11);
  FakeLlm llm;
  llm.Run(a, 40);
  // Leave a request in flight: it is not persisted and is asked again.
  std::optional<StageRequest> inflight = a.NextRequest();
  ASSERT_TRUE(inflight);

  const json saved = a.ToJson();
  Result<PacEvolveSearch> b = PacEvolveSearch::FromJson(saved);
  ASSERT_TRUE(b.ok()) << b.error().message;
  EXPECT_EQ(b->ToJson(), saved);

  // Both copies continue with the same answers from here on.
  Result<PacEvolveSearch> c = PacEvolveSearch::FromJson(saved);
  ASSERT_TRUE(c.ok());
  FakeLlm l1 = llm, l2 = llm;
  l1.Run(*b, 90);
  l2.Run(*c, 90);
  EXPECT_EQ(b->ToJson(), c->ToJson());
  EXPECT_EQ(b->evaluations(), 90);

  json broken = saved;
  broken["format"] = "something else";
  EXPECT_FALSE(PacEvolveSearch::FromJson(broken).ok());
  broken = saved;
  broken["islands"].erase(0);
  EXPECT_FALSE(PacEvolveSearch::FromJson(broken).ok());
}

TEST(PacEvolveSearchTest, EvaluationsInFlightSurviveAResume) {
  PacEvolveSearch s = Make(OneIsland());
  Driver d{s};
  d.Ideas({"idea"});
  d.ClassifyNew();
  d.Select(1, "exp");
  StageRequest impl = d.Expect(StageKind::kImplementation);
  ASSERT_TRUE(s.ObserveSubmitted(impl.id, "c1").ok());
  EXPECT_EQ(s.ObserveSubmitted(impl.id, "c1").error().kind, ErrorKind::kNotFound);
  Result<PacEvolveSearch> back = PacEvolveSearch::FromJson(s.ToJson());
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->PendingEvaluations(), (std::vector<std::pair<int, std::string>>{{0, "c1"}}));
  ASSERT_TRUE(back->ObserveEvaluation("c1", Accepted(4.0)).ok());
  EXPECT_EQ(back->BestProgram()->candidate_id, "c1");
}

TEST(PacEvolveSearchTest, CreateValidatesItsInputs) {
  EXPECT_FALSE(PacEvolveSearch::Create(PacEvolveOptions{}, 0.0, 0.0, 1).ok());
  EXPECT_FALSE(PacEvolveSearch::Create(PacEvolveOptions{}, 1.0, -1.0, 1).ok());
  PacEvolveOptions bad;
  bad.momentum_beta = 1.0;
  EXPECT_FALSE(PacEvolveSearch::Create(bad, 1.0, 0.1, 1).ok());
}

}  // namespace
}  // namespace kforge::search::pacevolve

namespace kforge::search::pacevolve {
namespace {

TEST(PacEvolveSearchTargetTest, SetTargetOnlyBeforeTheFirstEvaluation) {
  PacEvolveOptions o;
  o.islands = 2;
  Result<PacEvolveSearch> s = PacEvolveSearch::Create(o, 1.0, 0.0, 3);
  ASSERT_TRUE(s.ok());
  EXPECT_FALSE(s->SetTarget(-0.1).ok());
  EXPECT_FALSE(s->SetTarget(1.0).ok());  // not below the starting runtime
  ASSERT_TRUE(s->SetTarget(0.25).ok());
  EXPECT_DOUBLE_EQ(s->target_ms(), 0.25);
  for (int i = 0; i < s->num_islands(); ++i) {
    EXPECT_DOUBLE_EQ(s->island(i).momentum.target(), 0.25);
  }
  // The state carries the new target through a save and restore.
  Result<PacEvolveSearch> restored = PacEvolveSearch::FromJson(s->ToJson());
  ASSERT_TRUE(restored.ok());
  EXPECT_DOUBLE_EQ(restored->target_ms(), 0.25);
}

}  // namespace
}  // namespace kforge::search::pacevolve
