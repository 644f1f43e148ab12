#include "report/line_diff.h"

#include <gtest/gtest.h>

#include <random>

namespace kforge::report {
namespace {

// Rebuilds both texts from a diff: every old line must come back in order
// from the kept and removed lines, every new line from the kept and added.
void ExpectReconstructs(const std::vector<std::string>& a, const std::vector<std::string>& b) {
  std::vector<DiffLine> d = DiffLines(a, b);
  std::vector<std::string> old_back, new_back;
  for (const DiffLine& l : d) {
    if (l.kind != DiffKind::kAdded) old_back.push_back(l.text);
    if (l.kind != DiffKind::kRemoved) new_back.push_back(l.text);
  }
  EXPECT_EQ(old_back, a);
  EXPECT_EQ(new_back, b);
}

int EditCount(const std::vector<DiffLine>& d) {
  int n = 0;
  for (const DiffLine& l : d) n += l.kind != DiffKind::kSame;
  return n;
}

TEST(LineDiff, SplitLinesKeepsAFinalLineWithoutNewline) {
  EXPECT_EQ(SplitLines("a\nb\n"), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(SplitLines("a\nb"), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(SplitLines("a\n\nb\n"), (std::vector<std::string>{"a", "", "b"}));
  EXPECT_TRUE(SplitLines("").empty());
}

TEST(LineDiff, ShortestEditScriptOfTheClassicExample) {
  // Myers' paper: ABCABBA -> CBABAC has edit distance 5.
  std::vector<std::string> a = {"A", "B", "C", "A", "B", "B", "A"};
  std::vector<std::string> b = {"C", "B", "A", "B", "A", "C"};
  auto d = DiffLines(a, b);
  EXPECT_EQ(EditCount(d), 5);
  ExpectReconstructs(a, b);
}

TEST(LineDiff, EqualAndEmptyTexts) {
  EXPECT_TRUE(UnifiedHunks("x\ny\n", "x\ny\n").empty());
  EXPECT_EQ(UnifiedDiff("same\n", "same\n", "a", "b"), "");
  ExpectReconstructs({}, {"only", "new"});
  ExpectReconstructs({"only", "old"}, {});
  auto d = DiffLines({}, {"n"});
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].kind, DiffKind::kAdded);
  EXPECT_EQ(d[0].new_line, 1);
  EXPECT_EQ(d[0].old_line, 0);
}

TEST(LineDiff, UnifiedDiffMatchesDiffU) {
  std::string a = "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n13\n14\n15\n";
  std::string b = "1\n2\n3\n4\nfive\n6\n7\n8\n9\n10\n11\n12\n13\n14\n15\nsixteen\n";
  // What GNU `diff -u` prints for these two files.
  std::string expected =
      "--- a.py\n+++ b.py\n"
      "@@ -2,7 +2,7 @@\n 2\n 3\n 4\n-5\n+five\n 6\n 7\n 8\n"
      "@@ -13,3 +13,4 @@\n 13\n 14\n 15\n+sixteen\n";
  EXPECT_EQ(UnifiedDiff(a, b, "a.py", "b.py"), expected);
}

TEST(LineDiff, CloseChangesShareAHunkAndReplacementsListRemovalsFirst) {
  std::string a = "a\nb\nc\nd\ne\nf\ng\n";
  std::string b = "a\nB\nc\nd\ne\nF\ng\n";
  auto hunks = UnifiedHunks(a, b);
  ASSERT_EQ(hunks.size(), 1u);  // the gap of 3 lines is within 2 * context
  EXPECT_EQ(hunks[0].old_start, 1);
  EXPECT_EQ(hunks[0].old_count, 7);
  EXPECT_EQ(hunks[0].new_count, 7);
  ASSERT_GE(hunks[0].lines.size(), 3u);
  EXPECT_EQ(hunks[0].lines[1].kind, DiffKind::kRemoved);
  EXPECT_EQ(hunks[0].lines[1].text, "b");
  EXPECT_EQ(hunks[0].lines[2].kind, DiffKind::kAdded);
  EXPECT_EQ(hunks[0].lines[2].text, "B");
  EXPECT_EQ(hunks[0].lines[2].new_line, 2);
}

TEST(LineDiff, InsertionIntoAnEmptyFileNamesLineZero) {
  auto hunks = UnifiedHunks("", "x\ny\n");
  ASSERT_EQ(hunks.size(), 1u);
  EXPECT_EQ(hunks[0].old_start, 0);
  EXPECT_EQ(hunks[0].old_count, 0);
  EXPECT_EQ(hunks[0].new_start, 1);
  EXPECT_EQ(hunks[0].new_count, 2);
}

TEST(LineDiff, RandomEditsReconstructAndAreNoLongerThanTheEditsMade) {
  std::mt19937 rng(7);
  for (int round = 0; round < 200; ++round) {
    std::vector<std::string> a;
    int n = static_cast<int>(rng() % 40);
    for (int i = 0; i < n; ++i) a.push_back(std::string(1, static_cast<char>('a' + rng() % 5)));
    std::vector<std::string> b = a;
    int edits = static_cast<int>(rng() % 6);
    for (int e = 0; e < edits; ++e) {
      if (!b.empty() && rng() % 2) {
        b.erase(b.begin() + static_cast<long>(rng() % b.size()));
      } else {
        b.insert(b.begin() + static_cast<long>(rng() % (b.size() + 1)), "new");
      }
    }
    ExpectReconstructs(a, b);
    EXPECT_LE(EditCount(DiffLines(a, b)), edits) << "round " << round;
  }
}

TEST(LineDiff, HugeRewriteFallsBackToRemoveAllAddAll) {
  std::vector<std::string> a, b;
  for (int i = 0; i < kMaxEditDistance; ++i) {
    a.push_back("old " + std::to_string(i));
    b.push_back("new " + std::to_string(i));
  }
  auto d = DiffLines(a, b);
  EXPECT_EQ(EditCount(d), 2 * kMaxEditDistance);
  EXPECT_EQ(d.front().kind, DiffKind::kRemoved);
  EXPECT_EQ(d.back().kind, DiffKind::kAdded);
  ExpectReconstructs(a, b);
}

}  // namespace
}  // namespace kforge::report
