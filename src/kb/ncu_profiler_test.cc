#include "kb/ncu_profiler.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "common/files.h"

namespace kforge::kb {
namespace {

namespace fs = std::filesystem;

const fs::path kRecorded = fs::path(KFORGE_SOURCE_DIR) / "bench/results/issue9/ncu";

// A stand-in for the ncu CLI (a test fixture, not product code): it records
// its arguments and the GPU it was given, and answers `--import` with a report recorded on an H100.
class FakeNcu : public ::testing::Test {
 protected:
  void SetUp() override {
    auto dir = MakeTempDir(fs::temp_directory_path(), "kforge-fake-ncu-");
    ASSERT_TRUE(dir.ok());
    dir_ = *dir;
    script_ = dir_ / "ncu";
    std::ofstream s(script_);
    s << "#!/bin/sh\n"
         "echo \"CUDA_VISIBLE_DEVICES=$CUDA_VISIBLE_DEVICES $*\" >> \"$FAKE_NCU_ARGS\"\n"
         "case \" $* \" in\n"
         "  *\" --import \"*) cat \"$FAKE_NCU_CSV\" ;;\n"
         "  *) echo '==PROF== profiled'; exit \"${FAKE_NCU_EXIT:-0}\" ;;\n"
         "esac\n";
    s.close();
    fs::permissions(script_, fs::perms::owner_all);
    setenv("FAKE_NCU_ARGS", (dir_ / "args").c_str(), 1);
    setenv("FAKE_NCU_CSV", (kRecorded / "l1_95_CrossEntropyLoss.raw.csv").c_str(), 1);
    unsetenv("FAKE_NCU_EXIT");
  }
  void TearDown() override { fs::remove_all(dir_); }

  ProfileRequest Request() {
    ProfileRequest r;
    r.task = "/tasks/ce.py";
    r.candidate = "/cands/ce_new.py";
    r.work_dir = dir_ / "work";
    r.ncu = script_.string();
    r.timeout = std::chrono::seconds(30);
    return r;
  }
  std::string Args() {
    std::ifstream in(dir_ / "args");
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }

  fs::path dir_, script_;
};

TEST_F(FakeNcu, RunsTheHarnessUnderNcuAndParsesTheReport) {
  auto r = ProfileProgram(Request());
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_EQ(r->kernels.size(), 2u);
  EXPECT_EQ(r->kernels[0].name, "cunn_SoftMaxForwardReg");
  EXPECT_EQ(r->state.state, kMemoryBound);
  EXPECT_FALSE(r->raw_csv.empty());
  std::string args = Args();
  EXPECT_NE(args.find("--clock-control none"), std::string::npos) << args;
  EXPECT_NE(args.find("--profile-from-start off"), std::string::npos) << args;
  EXPECT_NE(args.find("--section SpeedOfLight"), std::string::npos) << args;
  EXPECT_NE(args.find("--section WarpStateStats"), std::string::npos) << args;
  EXPECT_NE(args.find("-m kforge_harness.profile --task /tasks/ce.py"), std::string::npos) << args;
  EXPECT_NE(args.find("--candidate /cands/ce_new.py"), std::string::npos) << args;
  EXPECT_NE(args.find("--import"), std::string::npos) << args;
  EXPECT_EQ(args.find("--native"), std::string::npos) << args;
}

// A native candidate is profiled from its built object.
TEST_F(FakeNcu, ANativeCandidateIsProfiledFromItsObject) {
  ProfileRequest req = Request();
  req.candidate.reset();
  req.native_library = "/cands/kernel.so";
  auto r = ProfileProgram(req);
  ASSERT_TRUE(r.ok()) << r.error().message;
  std::string args = Args();
  EXPECT_NE(args.find("-m kforge_harness.profile --task /tasks/ce.py"), std::string::npos) << args;
  EXPECT_NE(args.find("--native /cands/kernel.so"), std::string::npos) << args;
  EXPECT_EQ(args.find("--candidate"), std::string::npos) << args;
}

// The profile runs on the request's GPU (an agent's draft: the GPU of the
// worker that checked it), the only one ncu's process can see.
TEST_F(FakeNcu, RunsOnTheRequestsGpu) {
  ProfileRequest req = Request();
  req.gpu = 2;
  auto r = ProfileProgram(req);
  ASSERT_TRUE(r.ok()) << r.error().message;
  std::string args = Args();
  EXPECT_EQ(args.rfind("CUDA_VISIBLE_DEVICES=2 ", 0), 0u) << args;
}

TEST_F(FakeNcu, AFailedProfileRunIsAnErrorWithTheLog) {
  setenv("FAKE_NCU_EXIT", "1", 1);
  auto r = ProfileProgram(Request());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().kind, ErrorKind::kIo);
  EXPECT_NE(r.error().message.find("==PROF== profiled"), std::string::npos) << r.error().message;
}

TEST_F(FakeNcu, NoKernelsIsBadInput) {
  setenv("FAKE_NCU_CSV", "/dev/null", 1);
  auto r = ProfileProgram(Request());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().kind, ErrorKind::kBadInput);
}

TEST(NcuProfile, MissingNcuIsAnError) {
  ProfileRequest r;
  r.task = "/tasks/t.py";
  r.work_dir = fs::temp_directory_path() / "kforge-ncu-missing-test";
  r.ncu = "/nonexistent/ncu";
  auto p = ProfileProgram(r);
  EXPECT_FALSE(p.ok());
  fs::remove_all(r.work_dir);
}

TEST(ProfileJson, UnknownMetricsAreNull) {
  KernelProfile k;
  k.name = "k";
  k.launches = 1;
  k.duration_us = 3;
  auto j = ToJson(k);
  EXPECT_TRUE(j["memory_sol_pct"].is_null());
  EXPECT_TRUE(j["registers_per_thread"].is_null());
  EXPECT_EQ(j["state"]["state"], kLaunchBound);
}

}  // namespace
}  // namespace kforge::kb
