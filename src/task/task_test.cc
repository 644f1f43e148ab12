#include "task/task.h"

#include <gtest/gtest.h>

#include <fstream>

namespace kforge {
namespace {

namespace fs = std::filesystem;

fs::path Scratch(const std::string& name) {
  fs::path d = fs::temp_directory_path() / ("kforge-task-test-" + name);
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

void Write(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream(p) << text;
}

TEST(TaskTest, LoadsFileWithHashAndLevel) {
  fs::path d = Scratch("load");
  Write(d / "level2" / "7_Thing.py", "class Model: pass\n");
  auto t = LoadTaskFile(d / "level2" / "7_Thing.py");
  ASSERT_TRUE(t.ok()) << t.error().message;
  EXPECT_EQ(t->name, "7_Thing");
  EXPECT_EQ(t->level, 2);
  EXPECT_EQ(t->sha256.size(), 64u);
}

TEST(TaskTest, MissingFileAndWrongExtensionAreBadInput) {
  auto missing = LoadTaskFile("/nonexistent/task.py");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().kind, ErrorKind::kBadInput);
  fs::path d = Scratch("ext");
  Write(d / "task.txt", "x");
  auto wrong = LoadTaskFile(d / "task.txt");
  ASSERT_FALSE(wrong.ok());
  EXPECT_EQ(wrong.error().kind, ErrorKind::kBadInput);
}

TEST(TaskTest, SuiteFromDirectoryIsOrderedByLevelThenNumber) {
  fs::path d = Scratch("suite");
  Write(d / "level1" / "10_B.py", "");
  Write(d / "level1" / "2_A.py", "");
  Write(d / "level2" / "1_C.py", "");
  Write(d / "level1" / "__init__.py", "");
  auto s = LoadSuite(d);
  ASSERT_TRUE(s.ok());
  ASSERT_EQ(s->size(), 3u);
  EXPECT_EQ((*s)[0].name, "2_A");
  EXPECT_EQ((*s)[1].name, "10_B");
  EXPECT_EQ((*s)[2].name, "1_C");
}

TEST(TaskTest, SuiteFromListFile) {
  fs::path d = Scratch("list");
  Write(d / "a.py", "");
  Write(d / "sub" / "b.py", "");
  Write(d / "suite.txt", "# tasks\na.py\n  sub/b.py  \n\n");
  auto s = LoadSuite(d / "suite.txt");
  ASSERT_TRUE(s.ok()) << s.error().message;
  EXPECT_EQ(s->size(), 2u);
  Write(d / "bad.txt", "missing.py\n");
  EXPECT_FALSE(LoadSuite(d / "bad.txt").ok());
  EXPECT_FALSE(LoadSuite(d / "nothing-here").ok());
}

TEST(TaskTest, SuitePathsListsWithoutLoading) {
  fs::path d = Scratch("paths");
  Write(d / "a.py", "");
  Write(d / "suite.txt", "# tasks\na.py  # trailing comment\n\n  missing.py\n/abs/c.py\n");
  auto listed = SuitePaths(d / "suite.txt");
  ASSERT_TRUE(listed.ok()) << listed.error().message;
  // A missing file is still listed: loading it is the caller's business.
  std::vector<fs::path> expect = {d / "a.py", d / "missing.py", "/abs/c.py"};
  EXPECT_EQ(*listed, expect);
  auto none = SuitePaths(d / "nothing-here");
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.error().kind, ErrorKind::kBadInput);
}

}  // namespace
}  // namespace kforge
