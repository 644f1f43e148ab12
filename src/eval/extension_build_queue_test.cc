#include "eval/extension_build_queue.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>

#include "common/files.h"

namespace kforge {
namespace {

namespace fs = std::filesystem;

TEST(TorchArchListForTest, FollowsTheNvccTarget) {
  EXPECT_EQ(TorchArchListFor("sm_90a"), "9.0a");
  EXPECT_EQ(TorchArchListFor("sm_86"), "8.6");
  EXPECT_EQ(TorchArchListFor("sm_100"), "10.0");
}

// The queue with real harness processes (Python and torch, no GPU, nothing
// compiled): the candidates below stand in for load_inline builds that
// succeed, fail to compile, or fail for another reason.
class ExtensionBuildQueueTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("kforge-ebq-test-" + std::to_string(::getpid()));
    fs::remove_all(root_);
    const char* old = std::getenv("KFORGE_CACHE_DIR");
    if (old) old_cache_ = old;
    ::setenv("KFORGE_CACHE_DIR", root_.c_str(), 1);
    auto queue = ExtensionBuildQueue::Create(EvalOptions{}, "9.0a", 2);
    ASSERT_TRUE(queue.ok()) << queue.error().message;
    queue_ = *queue;
  }
  void TearDown() override {
    queue_.reset();
    if (old_cache_.empty()) {
      ::unsetenv("KFORGE_CACHE_DIR");
    } else {
      ::setenv("KFORGE_CACHE_DIR", old_cache_.c_str(), 1);
    }
    fs::remove_all(root_);
  }

  fs::path root_;
  std::string old_cache_;
  std::shared_ptr<ExtensionBuildQueue> queue_;
};

TEST_F(ExtensionBuildQueueTest, BuildsInTheEnvironmentTheCandidateProcessWillHave) {
  const std::string source =
      "import os\n"
      "open('seen.txt', 'w').write(os.environ['TORCH_EXTENSIONS_DIR'] + '|' +\n"
      "    os.environ['TORCH_CUDA_ARCH_LIST'] + '|' + os.environ['CUDA_VISIBLE_DEVICES'])\n";
  queue_->Submit(source);
  ExtensionPrebuild built = queue_->Get(source);
  ASSERT_TRUE(built.ok) << built.error << "\n" << built.log;
  EXPECT_FALSE(built.build_failed);
  EXPECT_FALSE(built.cached);
  const std::string dir = built.env.at("TORCH_EXTENSIONS_DIR");
  EXPECT_EQ(built.env.at("TORCH_CUDA_ARCH_LIST"), "9.0a");
  auto seen = ReadFile(fs::path(dir).parent_path() / "seen.txt");
  ASSERT_TRUE(seen.ok());
  EXPECT_EQ(*seen, dir + "|9.0a|");  // and no GPU visible
  ExtensionPrebuild again = queue_->Get(source);
  EXPECT_TRUE(again.ok && again.cached);
  EXPECT_EQ(again.env, built.env);
}

TEST_F(ExtensionBuildQueueTest, ACompileErrorIsAFailedBuildAndIsCached) {
  const std::string source =
      "raise RuntimeError(\"Error building extension 'kf': nvcc exited with 1\")\n";
  ExtensionPrebuild built = queue_->Get(source);
  ASSERT_TRUE(built.ok) << built.error;
  EXPECT_TRUE(built.build_failed);
  EXPECT_NE(built.error.find("Error building extension"), std::string::npos) << built.error;
  ExtensionPrebuild again = queue_->Get(source);
  EXPECT_TRUE(again.cached && again.build_failed);
}

TEST_F(ExtensionBuildQueueTest, OtherImportFailuresAreLeftToTheEvaluation) {
  ExtensionPrebuild built = queue_->Get("import torch\ntorch.zeros(1, device='cuda')\n");
  ASSERT_TRUE(built.ok) << built.error;
  EXPECT_FALSE(built.build_failed);
  EXPECT_TRUE(built.error.empty());
}

TEST_F(ExtensionBuildQueueTest, DifferentSourcesGetDifferentEntries) {
  EXPECT_NE(queue_->KeyFor("a = 1\n"), queue_->KeyFor("a = 2\n"));
  ExtensionPrebuild a = queue_->Get("a = 1\n");
  ExtensionPrebuild b = queue_->Get("a = 2\n");
  EXPECT_NE(a.env.at("TORCH_EXTENSIONS_DIR"), b.env.at("TORCH_EXTENSIONS_DIR"));
}

}  // namespace
}  // namespace kforge
