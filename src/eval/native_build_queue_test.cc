#include "eval/native_build_queue.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <future>

#include "common/files.h"

namespace kforge {
namespace {

namespace fs = std::filesystem;

TEST(NativeArchForTest, MapsCapabilitiesToNvccTargets) {
  EXPECT_EQ(NativeArchFor("9.0"), "sm_90a");  // Hopper: the arch-specific target
  EXPECT_EQ(NativeArchFor("8.6"), "sm_86");
  EXPECT_EQ(NativeArchFor("10.0"), "sm_100");
  EXPECT_EQ(NativeArchFor(""), "sm_90a");  // unknown: the documented default
}

TEST(NativeBuildQueueTest, AnUnrunnableCompilerIsBadInput) {
  EvalOptions options;
  options.nvcc = "/nonexistent/nvcc";
  options.native_cache_dir =
      fs::temp_directory_path() / ("kforge-nbq-bad-" + std::to_string(::getpid()));
  auto queue = NativeBuildQueue::Create(options, "sm_90a", 1);
  ASSERT_FALSE(queue.ok());
  EXPECT_EQ(queue.error().kind, ErrorKind::kBadInput);
  fs::remove_all(options.native_cache_dir);
}

// Real nvcc (compile only, no GPU); skipped where the toolkit is absent.
class NativeBuildQueueNvccTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* src = std::getenv("KFORGE_SOURCE_DIR");
    ASSERT_NE(src, nullptr);
    auto source = ReadFile(fs::path(src) / "src" / "compile" / "testdata" / "add_one.cu");
    ASSERT_TRUE(source.ok());
    source_ = *source;
    options_.native_cache_dir =
        fs::temp_directory_path() / ("kforge-nbq-test-" + std::to_string(::getpid()));
    fs::remove_all(options_.native_cache_dir);
    options_.nvcc = fs::exists("/usr/local/cuda/bin/nvcc") ? "/usr/local/cuda/bin/nvcc" : "nvcc";
    auto queue = NativeBuildQueue::Create(options_, "sm_90a", 2);
    if (!queue.ok()) GTEST_SKIP() << "no nvcc: " << queue.error().message;
    queue_ = *queue;
  }
  void TearDown() override {
    queue_.reset();
    fs::remove_all(options_.native_cache_dir);
  }

  EvalOptions options_;
  std::string source_;
  std::shared_ptr<NativeBuildQueue> queue_;
};

TEST_F(NativeBuildQueueNvccTest, ABuildSubmittedAheadIsTheOneTheEvaluatorGets) {
  queue_->Submit(source_);
  auto step = queue_->AsBuildStep();
  compile::NativeBuildResult got = step({source_, "sm_90a", {}});
  ASSERT_TRUE(got.ok) << got.error << "\n" << got.log;
  EXPECT_FALSE(got.cache_hit);  // built once, by the submission ahead of time
  EXPECT_TRUE(fs::exists(got.library));
  // Asked again once finished: the cache answers.
  compile::NativeBuildResult again = queue_->Get({source_, "sm_90a", {}});
  EXPECT_TRUE(again.ok);
  EXPECT_TRUE(again.cache_hit);
  EXPECT_EQ(again.library, got.library);
}

TEST_F(NativeBuildQueueNvccTest, AFailedBuildIsAResultWithTheLog) {
  compile::NativeBuildResult got = queue_->Get(
      {"#include \"kforge_native.h\"\nint f() { return undeclared_name; }\n", "sm_90a", {}});
  EXPECT_FALSE(got.ok);
  EXPECT_NE(got.log.find("undeclared_name"), std::string::npos) << got.log;
}

}  // namespace
}  // namespace kforge
