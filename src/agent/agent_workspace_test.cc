#include "agent/agent_workspace.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "common/files.h"

namespace kforge::agent {
namespace {

namespace fs = std::filesystem;

class AgentWorkspaceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto dir = MakeTempDir(fs::temp_directory_path(), "kforge-agent-ws-");
    ASSERT_TRUE(dir.ok());
    root_ = *dir;
    fs::create_directories(root_ / "ws");
  }
  void TearDown() override { fs::remove_all(root_); }
  fs::path root_;
};

TEST_F(AgentWorkspaceTest, WritesReadsEditsAndListsInsideTheRoot) {
  AgentWorkspace ws(root_ / "ws");
  ASSERT_TRUE(ws.Write("model_new.py", "a = 1\nb = 2\n").ok());
  ASSERT_TRUE(ws.Write("notes/plan.txt", "fuse").ok());
  EXPECT_EQ(*ws.Read("model_new.py"), "a = 1\nb = 2\n");
  ASSERT_TRUE(ws.Edit("model_new.py", "b = 2", "b = 3").ok());
  EXPECT_EQ(*ws.Read("model_new.py"), "a = 1\nb = 3\n");
  EXPECT_EQ(ws.List(), (std::vector<std::string>{"model_new.py", "notes/plan.txt"}));
}

TEST_F(AgentWorkspaceTest, PathsOutsideTheRootAndSymlinksAreRefused) {
  AgentWorkspace ws(root_ / "ws");
  std::ofstream(root_ / "secret.txt") << "reference output";
  fs::create_symlink(root_ / "secret.txt", root_ / "ws" / "link.txt");
  for (const char* bad : {"../secret.txt", "/etc/passwd", "a/../../secret.txt", "link.txt", ""}) {
    auto r = ws.Read(bad);
    EXPECT_FALSE(r.ok()) << bad;
    EXPECT_FALSE(ws.Write(bad, "x").ok()) << bad;
  }
  EXPECT_EQ(*ReadFile(root_ / "secret.txt"), "reference output");
  EXPECT_EQ(ws.List(), std::vector<std::string>{});  // the link is not listed as a file
}

TEST_F(AgentWorkspaceTest, EditNeedsExactlyOneOccurrenceAndSizesAreBounded) {
  AgentWorkspace ws(root_ / "ws");
  ASSERT_TRUE(ws.Write("k.cu", "x += 1;\nx += 1;\n").ok());
  auto twice = ws.Edit("k.cu", "x += 1;", "x += 2;");
  ASSERT_FALSE(twice.ok());
  EXPECT_NE(twice.error().message.find("more than once"), std::string::npos);
  auto absent = ws.Edit("k.cu", "y", "z");
  ASSERT_FALSE(absent.ok());
  EXPECT_NE(absent.error().message.find("does not occur"), std::string::npos);
  EXPECT_FALSE(ws.Write("big.txt", std::string(kMaxWorkspaceFileBytes + 1, 'x')).ok());
  for (size_t i = ws.List().size(); i < kMaxWorkspaceFiles; ++i) {
    ASSERT_TRUE(ws.Write("f" + std::to_string(i), "x").ok());
  }
  EXPECT_FALSE(ws.Write("one_too_many", "x").ok());
  EXPECT_TRUE(ws.Write("k.cu", "x += 3;\n").ok());  // overwriting is always allowed
}

}  // namespace
}  // namespace kforge::agent
