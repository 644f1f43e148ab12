// The printers over the fixture store: HTML (escaping, anchors, no scripts or
// fetches), CSV quoting, JSON fields and the terminal tables.
#include <gtest/gtest.h>

#include <filesystem>
#include <regex>

#include "common/files.h"
#include "report/report_csv.h"
#include "report/report_data.h"
#include "report/report_fixture.h"
#include "report/report_html.h"
#include "report/report_json.h"
#include "report/report_text.h"

namespace kforge::report {
namespace {

size_t Count(const std::string& s, const std::string& what) {
  size_t n = 0;
  for (size_t pos = s.find(what); pos != std::string::npos; pos = s.find(what, pos + 1)) ++n;
  return n;
}

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

class ReportRenderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto dir = MakeTempDir(std::filesystem::temp_directory_path(), "kforge-render-test-");
    ASSERT_TRUE(dir.ok()) << dir.error().message;
    dir_ = *dir;
    auto store = OpenStore((dir_ / "kforge.db").string());
    ASSERT_TRUE(store.ok()) << store.error().message;
    store_ = std::move(store).value();
    ASSERT_TRUE(fixture::WriteFixture(*store_).ok());
    auto run = LoadRunReport(*store_, fixture::kRunId, {});
    ASSERT_TRUE(run.ok()) << run.error().message;
    run_ = std::move(*run);
    auto bench = LoadBenchReport(*store_, fixture::kBenchId, {});
    ASSERT_TRUE(bench.ok()) << bench.error().message;
    bench_ = std::move(*bench);
  }
  void TearDown() override {
    store_.reset();
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }

  std::filesystem::path dir_;
  std::unique_ptr<Store> store_;
  RunReport run_;
  BenchReport bench_;
};

// Structural checks every page must pass.
void ExpectWellFormedPage(const std::string& html) {
  EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_NE(html.find("Content-Security-Policy"), std::string::npos);
  std::string lower = Lower(html);
  EXPECT_EQ(lower.find("<script"), std::string::npos);
  EXPECT_EQ(lower.find("<img"), std::string::npos);
  EXPECT_EQ(lower.find("<iframe"), std::string::npos);
  // No event-handler attribute inside any tag (escaped text may mention one).
  EXPECT_FALSE(std::regex_search(lower, std::regex("<[a-z][^<>]*\\son[a-z]+=")));
  EXPECT_EQ(lower.find("<link rel=\"stylesheet\""), std::string::npos);
  // The only URL is the SVG namespace, which is an identifier, not a fetch.
  std::string without_ns =
      std::regex_replace(html, std::regex("xmlns=\"http://www.w3.org/2000/svg\""), "");
  EXPECT_EQ(without_ns.find("http://"), std::string::npos);
  EXPECT_EQ(without_ns.find("https://"), std::string::npos);
  for (const char* tag : {"svg", "section", "details", "pre", "table", "div", "a"}) {
    std::string open = std::string("<") + tag;
    // Count opening tags exactly ("<a" must not count "<abbr").
    size_t opens = Count(html, open + " ") + Count(html, open + ">");
    EXPECT_EQ(opens, Count(html, std::string("</") + tag + ">")) << tag;
  }
}

TEST_F(ReportRenderTest, RunPageEscapesHostileTextAndLinksCandidates) {
  HtmlPageOptions options;
  options.generated_at = "2026-03-03T00:00:00.000000Z";
  std::string html = RenderRunHtml(run_, options);
  ExpectWellFormedPage(html);
  // c03's source and an event detail carry markup and invalid bytes.
  EXPECT_NE(html.find("&lt;/pre&gt;&lt;script&gt;alert(&#39;not escaped&#39;)&lt;/script&gt;"),
            std::string::npos);
  EXPECT_NE(html.find("\xEF\xBF\xBD"), std::string::npos);
  EXPECT_EQ(html.find("\xFF"), std::string::npos);
  EXPECT_NE(html.find("&lt;img src=x onerror=alert(1)&gt;"), std::string::npos);
  // Every candidate has a section; parents link to theirs.
  for (const CandidateRow& c : run_.candidates) {
    EXPECT_NE(html.find("id=\"c-" + c.id + "\""), std::string::npos) << c.id;
  }
  EXPECT_NE(html.find("href=\"#c-c05\""), std::string::npos);
  EXPECT_NE(html.find("href=\"#c-c08\""), std::string::npos);
  // c09's diff against c05 adds its line and removes c05's.
  EXPECT_NE(html.find("<span class=\"add\">+  // fused max/sum, vectorized exp</span>"),
            std::string::npos);
  EXPECT_NE(html.find("<span class=\"del\">-  // vectorized exp</span>"), std::string::npos);
  // Flags, profile summary and eval JSON.
  EXPECT_NE(html.find("side_stream"), std::string::npos);
  EXPECT_NE(html.find("<dt>dram_throughput_pct</dt><dd>71.5</dd>"), std::string::npos);
  EXPECT_NE(html.find("<dt>top_stall.reason</dt>"), std::string::npos);
  EXPECT_NE(html.find("&quot;kforge_version&quot;"), std::string::npos);
  // Charts: islands with backtrack and crossover markers, histogram, cost.
  EXPECT_GE(Count(html, "<svg"), 3u);
  EXPECT_NE(html.find("backtrack on island 1 at iteration 6"), std::string::npos);
  EXPECT_NE(html.find("crossover on island 0 at iteration 9"), std::string::npos);
  EXPECT_NE(html.find("cumulative cost (USD)"), std::string::npos);
  EXPECT_NE(html.find("11 evaluation events not listed"), std::string::npos);
}

TEST_F(ReportRenderTest, BenchPageListsTasksAndDegenerateOnesApart) {
  HtmlPageOptions options;
  options.run_href = [](const std::string& id) { return "pages/" + id + ".html"; };
  std::string html = RenderBenchHtml(bench_, options);
  ExpectWellFormedPage(html);
  EXPECT_NE(html.find("href=\"pages/run-bench-1.html\""), std::string::npos);
  EXPECT_NE(html.find("<h2>Degenerate tasks</h2>"), std::string::npos);
  EXPECT_NE(html.find("reference output is constant (baseline check)"), std::string::npos);
  EXPECT_NE(html.find("50.0%"), std::string::npos);  // the pass rate
  EXPECT_NE(html.find("fast_0.8"), std::string::npos);
  EXPECT_GE(Count(html, "<svg"), 4u);  // fast_p, histogram, task bars, cost
  EXPECT_NE(html.find("fast_1 eager = 25.0%"), std::string::npos);
}

TEST_F(ReportRenderTest, WriteHtmlReportWritesRunPagesBesideTheBenchPage) {
  std::filesystem::path file = dir_ / "out" / "bench.html";
  std::filesystem::create_directories(file.parent_path());
  auto out = WriteHtmlReport(*store_, ReportKind::kBench, fixture::kBenchId, file, {});
  ASSERT_TRUE(out.ok()) << out.error().message;
  EXPECT_TRUE(std::filesystem::exists(file));
  ASSERT_EQ(out->pages.size(), 6u);
  EXPECT_EQ(out->pages[0], dir_ / "out" / "bench_runs" / "run-bench-1.html");
  auto page = ReadFile(out->pages[0]);
  ASSERT_TRUE(page.ok());
  EXPECT_NE(page->find("href=\"../bench.html\""), std::string::npos);
  auto main = ReadFile(file);
  ASSERT_TRUE(main.ok());
  EXPECT_NE(main->find("href=\"bench_runs/run-bench-1.html\""), std::string::npos);
}

TEST_F(ReportRenderTest, CsvQuotesAndHasOneRowPerItem) {
  EXPECT_EQ(CsvField("plain"), "plain");
  EXPECT_EQ(CsvField("a,b"), "\"a,b\"");
  EXPECT_EQ(CsvField("say \"hi\""), "\"say \"\"hi\"\"\"");
  EXPECT_EQ(CsvField("two\nlines"), "\"two\nlines\"");
  std::string run_csv = RunReportCsv(run_);
  EXPECT_EQ(Count(run_csv, "\r\n"), 13u);  // header + 12 candidates
  EXPECT_EQ(run_csv.rfind("run_id,candidate_id,iteration,island,parents,", 0), 0u);
  EXPECT_NE(
      run_csv.find("run-fixture-cpu,c09,9,0,c05;c08,cpp,true,true,true,true,true,ok,2.05,1.5,"),
      std::string::npos);
  std::string bench_csv = BenchReportCsv(bench_);
  EXPECT_EQ(Count(bench_csv, "\r\n"), 7u);
  EXPECT_NE(bench_csv.find("bench-fixture,4_Constant,"), std::string::npos);
}

TEST_F(ReportRenderTest, JsonCarriesTheContractFields) {
  nlohmann::json run = RunReportJson(run_);
  EXPECT_EQ(run["kind"], "run");
  EXPECT_EQ(run["run_id"], fixture::kRunId);
  EXPECT_EQ(run["candidates"].size(), 12u);
  EXPECT_EQ(run["best"]["candidate_id"], "c09");
  EXPECT_EQ(run["summary"]["headline"], 7);
  EXPECT_EQ(run["island_progress"].size(), 2u);
  EXPECT_EQ(run["events"][11]["type"], "idea_added");
  EXPECT_TRUE(run["events"][11]["detail"].is_object());
  nlohmann::json bench = BenchReportJson(bench_);
  EXPECT_EQ(bench["bench_id"], fixture::kBenchId);
  EXPECT_EQ(bench["tasks"].size(), 6u);
  for (const char* key : {"task", "run_id", "status", "best", "degenerate"}) {
    EXPECT_TRUE(bench["tasks"][0].contains(key)) << key;
  }
  EXPECT_EQ(bench["tasks"][0]["best"]["candidate_id"], "b1c2");
  EXPECT_EQ(bench["metrics"]["tasks"], 4);
  EXPECT_DOUBLE_EQ(bench["metrics"]["fast_p"]["eager"]["0"].get<double>(), 0.5);
}

TEST_F(ReportRenderTest, TerminalTables) {
  std::string run = RunReportText(run_);
  EXPECT_NE(run.find("best c09: 2.05x vs eager"), std::string::npos);
  EXPECT_NE(run.find("events: backtrack 1 crossover 1"), std::string::npos);
  std::string bench = BenchReportText(bench_);
  EXPECT_NE(bench.find("fast_0.5"), std::string::npos);
  EXPECT_NE(bench.find("pass rate 50.0%"), std::string::npos);
  EXPECT_NE(bench.find("4_Constant: reference output is constant"), std::string::npos);
  EXPECT_NE(bench.find("5_Suspect"), std::string::npos);
}

}  // namespace
}  // namespace kforge::report
