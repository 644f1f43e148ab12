#include "compile/native_compiler.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>

#include "common/files.h"

namespace kforge::compile {
namespace {

namespace fs = std::filesystem;

// Compile-only: nvcc builds the native fixtures for sm_90a without a GPU. CI
// machines have the CUDA toolkit; without nvcc the tests are skipped.
class NativeCompilerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* src = std::getenv("KFORGE_SOURCE_DIR");
    ASSERT_NE(src, nullptr);
    testdata_ = fs::path(src) / "src" / "compile" / "testdata";
    root_ = fs::temp_directory_path() / ("kforge-nvcc-test-" + std::to_string(::getpid()));
    fs::remove_all(root_);
    auto cache = CompileCache::Open(root_, 0);
    ASSERT_TRUE(cache.ok());
    const char* nvcc = std::getenv("KFORGE_NVCC");
    std::string path = nvcc ? nvcc : "nvcc";
    if (!nvcc && fs::exists("/usr/local/cuda/bin/nvcc")) path = "/usr/local/cuda/bin/nvcc";
    auto compiler = NativeCompiler::Create(path, *cache);
    if (!compiler.ok()) GTEST_SKIP() << "no nvcc: " << compiler.error().message;
    compiler_.emplace(std::move(compiler).value());
  }
  void TearDown() override { fs::remove_all(root_); }

  NativeBuildRequest Request(const std::string& fixture) {
    auto source = ReadFile(testdata_ / fixture);
    EXPECT_TRUE(source.ok());
    return {*source, "sm_90a", {}};
  }

  fs::path testdata_, root_;
  std::optional<NativeCompiler> compiler_;
};

TEST_F(NativeCompilerTest, BuildsASharedObjectWithTheAbiAndCachesIt) {
  NativeBuildResult first = compiler_->Build(Request("add_one.cu"));
  ASSERT_TRUE(first.ok) << first.error << "\n" << first.log;
  EXPECT_FALSE(first.cache_hit);
  EXPECT_TRUE(fs::exists(first.library));
  EXPECT_GT(first.seconds, 0);
  ASSERT_EQ(first.resources.size(), 1u);
  EXPECT_EQ(first.resources[0].arch, "sm_90a");
  EXPECT_GT(first.resources[0].registers, 0);
  // The exported symbols are the ABI's (checked without loading: no GPU needed).
  auto nm = std::system(
      ("nm -D --defined-only " + first.library.string() + " | grep -q ' kforge_forward$'").c_str());
  EXPECT_EQ(nm, 0);
  NativeBuildResult second = compiler_->Build(Request("add_one.cu"));
  EXPECT_TRUE(second.ok);
  EXPECT_TRUE(second.cache_hit);
  EXPECT_EQ(second.key, first.key);
  EXPECT_EQ(second.library, first.library);
}

TEST_F(NativeCompilerTest, ReportsSharedMemoryAndStack) {
  NativeBuildResult r = compiler_->Build(Request("smem_spill.cu"));
  ASSERT_TRUE(r.ok) << r.log;
  ASSERT_EQ(r.resources.size(), 1u);
  EXPECT_EQ(r.resources[0].shared_bytes, 1024);
  EXPECT_GT(r.resources[0].stack_frame_bytes, 0);
}

TEST_F(NativeCompilerTest, ACompileErrorIsAFailedResultAndIsCached) {
  NativeBuildResult r = compiler_->Build(Request("syntax_error.cu"));
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.error.find("undeclared_function"), std::string::npos) << r.error;
  EXPECT_TRUE(r.library.empty());
  NativeBuildResult again = compiler_->Build(Request("syntax_error.cu"));
  EXPECT_FALSE(again.ok);
  EXPECT_TRUE(again.cache_hit);
  EXPECT_EQ(again.error, r.error);
}

TEST_F(NativeCompilerTest, FlagsTargetTheArchAndKeysDependOnThem) {
  auto flags = NativeCompiler::Flags("sm_90a");
  EXPECT_NE(std::find(flags.begin(), flags.end(), "-gencode=arch=compute_90a,code=sm_90a"),
            flags.end());
  NativeBuildRequest a = Request("add_one.cu");
  NativeBuildRequest b = a;
  b.arch = "sm_80";
  EXPECT_NE(compiler_->KeyFor(a), compiler_->KeyFor(b));
}

TEST(NativeAbiHeaderTest, EmbeddedHeaderIsTheAbi) {
  std::string_view h = NativeAbiHeader();
  EXPECT_NE(h.find("#define KFORGE_NATIVE_ABI_VERSION 1"), std::string_view::npos);
  EXPECT_NE(h.find("kforge_forward(const kf_call* call)"), std::string_view::npos);
}

}  // namespace
}  // namespace kforge::compile
