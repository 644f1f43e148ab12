#include "report/svg_chart.h"

#include <gtest/gtest.h>

#include <regex>

namespace kforge::report::svg {
namespace {

size_t Count(const std::string& s, const std::string& what) {
  size_t n = 0;
  for (size_t pos = s.find(what); pos != std::string::npos; pos = s.find(what, pos + 1)) ++n;
  return n;
}

TEST(Ticks, NiceAndLog) {
  auto t = NiceTicks(0, 1, 5);
  ASSERT_EQ(t.size(), 6u);
  EXPECT_NEAR(t[3], 0.6, 1e-12);
  EXPECT_EQ(NiceTicks(3, 97, 5).front(), 20);
  EXPECT_EQ(LogTicks(0.5, 20), (std::vector<double>{0.5, 1, 2, 5, 10, 20}));
  EXPECT_EQ(LogTicks(0.001, 1000), (std::vector<double>{0.001, 0.01, 0.1, 1, 10, 100, 1000}));
  EXPECT_TRUE(NiceTicks(1, 1, 5).empty());
}

TEST(LineChart, EscapesNamesAndTooltipsAndDrawsMarkers) {
  LineChart c;
  c.title = "a <title> & more";
  c.y.log = true;
  c.y_reference = 1;
  Series s;
  s.name = "island <0>";
  s.color = "#123456";
  s.step = true;
  s.dots = true;
  s.points = {{0, 1.1, "it 0: <b>"}, {3, 1.5, "it 3"}};
  c.series.push_back(s);
  c.markers.push_back(
      {2, 1.1, MarkerShape::kTriangleDown, "#dc2626", "backtrack \"x\"", "backtrack"});
  std::string svg = Render(c);
  EXPECT_EQ(svg.rfind("<svg", 0), 0u);
  EXPECT_NE(svg.find("viewBox=\"0 0 760 340\""), std::string::npos);
  EXPECT_NE(svg.find("island &lt;0&gt;"), std::string::npos);
  EXPECT_NE(svg.find("it 0: &lt;b&gt;"), std::string::npos);
  EXPECT_NE(svg.find("backtrack &quot;x&quot;"), std::string::npos);
  EXPECT_NE(svg.find("aria-label=\"a &lt;title&gt; &amp; more\""), std::string::npos);
  EXPECT_EQ(svg.find("<b>"), std::string::npos);
  EXPECT_EQ(Count(svg, "<circle"), 2u);
  // A step line moves horizontally, then vertically.
  EXPECT_TRUE(std::regex_search(svg, std::regex("d=\"M[0-9.]+ [0-9.]+H[0-9.]+V[0-9.]+\"")));
  EXPECT_EQ(Count(svg, "<svg"), Count(svg, "</svg>"));
  EXPECT_EQ(svg.find("<script"), std::string::npos);
}

TEST(LineChart, EmptyChartSaysSo) {
  LineChart c;
  c.title = "nothing";
  std::string svg = Render(c);
  EXPECT_NE(svg.find("no data yet"), std::string::npos);
}

TEST(BarChart, LinksLabelsAndWritesNotesForMissingValues) {
  BarChart c;
  c.title = "bars";
  c.names = {"eager", "compile"};
  c.colors = {kEagerColor, kCompileColor};
  c.x.log = true;
  c.x.format = SpeedupTick;
  c.bars.push_back({"1_Good", "runs/a.html?x=1&y=\"2\"", {2.0, 1.2}, "", false, ""});
  c.bars.push_back({"4_<Constant>", "", {}, "degenerate", true, ""});
  std::string svg = Render(c);
  EXPECT_NE(svg.find("href=\"runs/a.html?x=1&amp;y=&quot;2&quot;\""), std::string::npos);
  EXPECT_NE(svg.find("4_&lt;Constant&gt;"), std::string::npos);
  EXPECT_NE(svg.find("degenerate"), std::string::npos);
  EXPECT_NE(svg.find(">2x<"), std::string::npos);
  EXPECT_EQ(Count(svg, "<rect") - Count(svg, "fill=\"#f9fafb\""), 2u);  // two value bars
}

TEST(BarChart, NotesStayInsideTheChartWhenEverySpeedupIsBelowOne) {
  BarChart c;
  c.title = "bars";
  c.names = {"eager", "compile"};
  c.x.log = true;
  c.x.format = SpeedupTick;
  c.bars.push_back({"40_LayerNorm", "", {0.98, 0.07}, "", false, ""});
  c.bars.push_back({"19_ReLU", "", {}, "no accepted candidate", true, ""});
  c.bars.push_back({"2_Ok", "", {2.0, 1.5}, "", false, ""});
  // With 2x on the axis the 1x line leaves room on its right: the note goes there.
  std::string svg = Render(c);
  size_t note = svg.find("no accepted candidate");
  ASSERT_NE(note, std::string::npos);
  EXPECT_NE(svg.rfind("text-anchor=\"start\"", note), std::string::npos);
  // Without it the 1x line is at the right edge: the note is written to its left.
  c.bars.pop_back();
  svg = Render(c);
  note = svg.find("no accepted candidate");
  ASSERT_NE(note, std::string::npos);
  size_t tag = svg.rfind("<text", note);
  ASSERT_NE(tag, std::string::npos);
  EXPECT_NE(svg.substr(tag, note - tag).find("text-anchor=\"end\""), std::string::npos);
  // Two series: each bar is at least 12 px high, so their labels do not overlap.
  size_t bar = svg.find("rx=\"2\"");  // value bars only
  ASSERT_NE(bar, std::string::npos);
  size_t h = svg.find("height=\"", svg.rfind("<rect", bar));
  EXPECT_GE(std::stod(svg.substr(h + 8)), 11.0);  // bar_h − 1
}

TEST(Histogram, CountsEverySample) {
  Histogram h;
  h.title = "h";
  h.x.log = true;
  h.names = {"eager"};
  h.colors = {kEagerColor};
  h.samples = {{0.5, 1, 1, 2, 4, 4, 4}};
  std::string svg = Render(h);
  // Every sample lands in exactly one bin: the tooltips' counts add up to 7.
  int total = 0;
  for (size_t pos = svg.find("eager: "); pos != std::string::npos;
       pos = svg.find("eager: ", pos + 1)) {
    total += std::stoi(svg.substr(pos + 7));
  }
  EXPECT_EQ(total, 7);
}

}  // namespace
}  // namespace kforge::report::svg
