// Report data read back from a store written by the fixture (real SQLite store).
#include "report/report_data.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>

#include "common/files.h"
#include "report/report_fixture.h"

namespace kforge::report {
namespace {

class ReportDataTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto dir = MakeTempDir(std::filesystem::temp_directory_path(), "kforge-report-test-");
    ASSERT_TRUE(dir.ok()) << dir.error().message;
    dir_ = *dir;
    auto store = OpenStore((dir_ / "kforge.db").string());
    ASSERT_TRUE(store.ok()) << store.error().message;
    store_ = std::move(store).value();
    Status written = fixture::WriteFixture(*store_);
    ASSERT_TRUE(written.ok()) << written.error().message;
  }
  void TearDown() override {
    store_.reset();
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }

  std::filesystem::path dir_;
  std::unique_ptr<Store> store_;
};

std::vector<int64_t> Iterations(const IslandProgress& p) {
  std::vector<int64_t> out;
  for (const BestPoint& b : p.points) out.push_back(b.iteration);
  return out;
}

std::vector<double> Speedups(const IslandProgress& p) {
  std::vector<double> out;
  for (const BestPoint& b : p.points) out.push_back(b.speedup);
  return out;
}

TEST_F(ReportDataTest, RunReportCountsEveryOutcome) {
  auto r = LoadRunReport(*store_, fixture::kRunId, {});
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->run.task_name, "23_Softmax");
  const RunTotals& t = r->totals;
  EXPECT_EQ(t.candidates, 12);
  EXPECT_EQ(t.evaluations, 11);  // c11 is still pending
  EXPECT_EQ(t.compiled, 10);     // c01 failed to compile
  EXPECT_EQ(t.correct, 9);       // and c03 was wrong
  EXPECT_EQ(t.accepted, 8);      // c06 was rejected
  EXPECT_EQ(t.headline, 7);      // c07 is suspect
  EXPECT_EQ(t.suspect, 1);
  EXPECT_EQ(t.rejected, 1);
  EXPECT_EQ(t.eager.count, 7);
  EXPECT_DOUBLE_EQ(*t.eager.max, 2.05);
  EXPECT_EQ(t.usage.calls, 13);

  EXPECT_EQ(r->outcome.candidate_id, "c09");
  EXPECT_DOUBLE_EQ(*r->outcome.speedup_eager, 2.05);
  EXPECT_EQ(r->outcome.verdict, "ok");
  EXPECT_FALSE(r->outcome.degenerate);

  ASSERT_EQ(r->candidates.size(), 12u);
  const CandidateRow& c09 = r->candidates[9];
  EXPECT_EQ(c09.id, "c09");
  EXPECT_EQ(c09.parent_ids, (std::vector<std::string>{"c05", "c08"}));
  const CandidateRow& c06 = r->candidates[6];
  ASSERT_EQ(c06.flags.size(), 1u);
  EXPECT_EQ(c06.flags[0].check, "side_stream");
  EXPECT_EQ(c06.flags[0].severity, "reject");
  EXPECT_FALSE(c06.headline);
  EXPECT_FALSE(r->candidates[11].evaluated);
  EXPECT_EQ(r->candidates[1].error, "compilation failed (see compile.log)");
  ASSERT_TRUE(r->candidates[0].candidate_ms);
  EXPECT_NEAR(*r->candidates[0].candidate_ms, 2.0 / 1.10, 1e-9);
}

TEST_F(ReportDataTest, BestPerIslandStepsOnlyOnHeadlineImprovements) {
  auto r = LoadRunReport(*store_, fixture::kRunId, {});
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_EQ(r->islands.size(), 2u);
  EXPECT_EQ(r->islands[0].island, 0);
  EXPECT_EQ(Iterations(r->islands[0]), (std::vector<int64_t>{0, 2, 5, 7, 9}));
  // The suspect 3.2x at iteration 7 does not raise the headline best.
  EXPECT_EQ(Speedups(r->islands[0]), (std::vector<double>{1.10, 1.40, 1.85, 1.85, 2.05}));
  // Island 1 has no best before its first accepted candidate (iteration 4).
  EXPECT_EQ(Iterations(r->islands[1]), (std::vector<int64_t>{4, 6, 8, 10}));
  EXPECT_EQ(Speedups(r->islands[1]), (std::vector<double>{1.25, 1.25, 1.60, 1.70}));

  auto with_suspect = LoadRunReport(*store_, fixture::kRunId, {.include_suspect = true});
  ASSERT_TRUE(with_suspect.ok());
  EXPECT_EQ(Speedups(with_suspect->islands[0]),
            (std::vector<double>{1.10, 1.40, 1.85, 3.20, 3.20}));
  EXPECT_EQ(with_suspect->outcome.candidate_id, "c07");
}

TEST_F(ReportDataTest, EventsAndCostOverTime) {
  auto r = LoadRunReport(*store_, fixture::kRunId, {});
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->events.size(), 15u);  // 11 evaluations + idea_added, backtrack, crossover, pruned
  int backtracks = 0, crossovers = 0;
  for (const EventMarker& e : r->events) {
    backtracks += e.type == "backtrack";
    crossovers += e.type == "crossover";
  }
  EXPECT_EQ(backtracks, 1);
  EXPECT_EQ(crossovers, 1);
  ASSERT_EQ(r->cost.size(), 13u);
  EXPECT_NEAR(r->cost.back().cumulative_cost_usd, 0.0125 * 78 + 0.004, 1e-12);
  EXPECT_DOUBLE_EQ(r->cost.back().elapsed_s, 13 * 60.0);
  EXPECT_DOUBLE_EQ(r->cost.front().elapsed_s, 60.0);
  EXPECT_EQ(r->cost.back().cumulative_tokens, 12 * 2450 + 1020);
}

TEST_F(ReportDataTest, BenchMetricsExcludeDegenerateTasksAndSuspectResults) {
  auto r = LoadBenchReport(*store_, fixture::kBenchId, {});
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_EQ(r->tasks.size(), 6u);
  EXPECT_EQ(r->tasks[0].task, "1_Good");
  EXPECT_EQ(r->tasks[0].candidate_id, "b1c2");  // the ok 2.0x, not the suspect 3.0x
  EXPECT_TRUE(r->tasks[3].degenerate);          // from the bench's record
  EXPECT_EQ(r->tasks[3].degenerate_reason, "reference output is constant (baseline check)");
  EXPECT_TRUE(r->tasks[5].degenerate);  // from its evaluation
  EXPECT_EQ(r->tasks[4].verdict, "suspect");

  const SuiteMetrics& m = r->metrics;
  EXPECT_EQ(m.tasks_total, 6);
  EXPECT_EQ(m.tasks, 4);
  EXPECT_EQ(m.degenerate_tasks, 2);
  EXPECT_EQ(m.accepted_tasks, 2);
  EXPECT_EQ(m.suspect_tasks, 1);
  EXPECT_DOUBLE_EQ(*m.pass_rate, 0.5);
  const double eager[] = {0.5, 0.25, 0.25, 0.25, 0.25, 0.0};
  const double compile[] = {0.5, 0.25, 0.25, 0.25, 0.0, 0.0};
  for (size_t i = 0; i < kFastPThresholds.size(); ++i) {
    EXPECT_DOUBLE_EQ(*m.eager.fast_p[i], eager[i]) << i;
    EXPECT_DOUBLE_EQ(*m.compile.fast_p[i], compile[i]) << i;
  }
  EXPECT_NEAR(*m.eager.stats.geomean, 1.0, 1e-12);
  EXPECT_NEAR(*m.compile.stats.geomean, std::sqrt(1.2 * 0.4), 1e-12);
  EXPECT_NEAR(m.cost_usd, 0.2125, 1e-12);
  EXPECT_EQ(m.tokens(), 24500);
  ASSERT_EQ(r->cost.size(), 10u);  // one call per candidate over the six runs
  EXPECT_NEAR(r->cost.back().cumulative_cost_usd, 0.2125, 1e-12);

  auto with_suspect = LoadBenchReport(*store_, fixture::kBenchId, {.include_suspect = true});
  ASSERT_TRUE(with_suspect.ok());
  EXPECT_EQ(with_suspect->tasks[0].candidate_id, "b1c3");
  EXPECT_DOUBLE_EQ(*with_suspect->metrics.pass_rate, 0.75);
  EXPECT_NEAR(*with_suspect->metrics.eager.stats.geomean, std::cbrt(3.0 * 0.5 * 4.0), 1e-12);
}

TEST_F(ReportDataTest, TaskOutcomeOfARunOutsideABench) {
  auto o = TaskOutcomeOfRun(*store_, "run-bench-2", {});
  ASSERT_TRUE(o.ok()) << o.error().message;
  EXPECT_EQ(o->task, "2_Slow");
  EXPECT_TRUE(o->accepted);
  EXPECT_DOUBLE_EQ(*o->speedup_compile, 0.4);
  EXPECT_EQ(o->evaluations, 1);
  EXPECT_EQ(o->input_tokens, 1800);
  EXPECT_EQ(o->output_tokens, 650);
}

TEST_F(ReportDataTest, IdsResolveToRunOrBench) {
  auto run = ResolveReportId(*store_, fixture::kRunId);
  ASSERT_TRUE(run.ok());
  EXPECT_EQ(*run, ReportKind::kRun);
  auto bench = ResolveReportId(*store_, fixture::kBenchId);
  ASSERT_TRUE(bench.ok());
  EXPECT_EQ(*bench, ReportKind::kBench);
  auto none = ResolveReportId(*store_, "nope");
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.error().kind, ErrorKind::kNotFound);
  EXPECT_NE(none.error().message.find("nope"), std::string::npos);
}

TEST(ParseIsoUtc, ReadsTheStoreTimestamps) {
  auto t = ParseIsoUtc("1970-01-02T00:00:01.500000Z");
  ASSERT_TRUE(t);
  EXPECT_DOUBLE_EQ(*t, 86401.5);
  EXPECT_FALSE(ParseIsoUtc("yesterday"));
}

}  // namespace
}  // namespace kforge::report
