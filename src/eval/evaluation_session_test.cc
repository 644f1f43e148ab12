#include "eval/evaluation_session.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "candidate/candidate.h"
#include "common/files.h"
#include "eval/evaluator.h"
#include "task/task.h"

namespace kforge {
namespace {

namespace fs = std::filesystem;

class EvaluationSessionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("kforge-session-test-" + std::to_string(::getpid()));
    fs::remove_all(root_);
    fs::create_directories(root_);
    if (const char* old = std::getenv("KFORGE_CACHE_DIR")) old_cache_ = old;
    ::setenv("KFORGE_CACHE_DIR", (root_ / "cache").c_str(), 1);
  }
  void TearDown() override {
    if (old_cache_.empty()) {
      ::unsetenv("KFORGE_CACHE_DIR");
    } else {
      ::setenv("KFORGE_CACHE_DIR", old_cache_.c_str(), 1);
    }
    fs::remove_all(root_);
  }
  static void Write(const fs::path& p, const std::string& text) {
    std::ofstream(p, std::ios::binary | std::ios::trunc) << text;
  }
  fs::path root_;
  std::string old_cache_;
};

TEST_F(EvaluationSessionTest, AFileRewrittenInPlaceIsNoLongerIntact) {
  EvaluationSession session(root_ / "s", /*reuse=*/true);
  fs::create_directories(session.io_dir());
  fs::path f = session.io_dir() / "inputs_0.pt";
  Write(f, "0123456789");
  EXPECT_FALSE(session.FileIntact(f));  // never recorded
  session.RecordFile(f);
  EXPECT_TRUE(session.FileIntact(f));
  // Same size, and the modification time set back to what it was: only the
  // status-change time tells.
  struct stat before {};
  ASSERT_EQ(::stat(f.c_str(), &before), 0);
  ::usleep(20000);
  Write(f, "9876543210");
  struct timespec times[2] = {before.st_atim, before.st_mtim};
  ASSERT_EQ(::utimensat(AT_FDCWD, f.c_str(), times, 0), 0);
  EXPECT_FALSE(session.FileIntact(f));
}

TEST_F(EvaluationSessionTest, KeptFilesStayOnlyWithReuse) {
  EvaluationSession kept(root_ / "kept", /*reuse=*/true);
  EvaluationSession once(root_ / "once", /*reuse=*/false);
  for (EvaluationSession* s : {&kept, &once}) {
    fs::create_directories(s->io_dir());
    fs::path f = s->io_dir() / "inputs_2.pt";
    Write(f, "x");
    s->RecordFile(f);
    s->DropFile(f);
    EXPECT_EQ(fs::exists(f), s->reuse());
  }
  kept.Discard();  // a failed reference: its files go with it
  EXPECT_FALSE(fs::exists(kept.io_dir() / "inputs_2.pt"));
}

// Real harness processes on the CPU: a task's candidates evaluated through
// one session agree with one-off evaluations, and the second is answered by
// the same reference process.
TEST_F(EvaluationSessionTest, CandidatesOfATaskShareTheReference) {
  const fs::path src = KFORGE_SOURCE_DIR;
  auto task = LoadTaskFile(src / "examples/tasks/fused_bias_relu6_scale.py");
  ASSERT_TRUE(task.ok()) << task.error().message;
  auto good =
      LoadCandidateFile(src / "examples/candidates/fused_bias_relu6_scale_reference.py", "cpu");
  ASSERT_TRUE(good.ok()) << good.error().message;
  fs::path wrong_path = root_ / "wrong.py";
  std::string wrong_source = good->source + "\n_orig = ModelNew.forward\n" +
                             "ModelNew.forward = lambda self, *a: _orig(self, *a) * 1.01\n";
  Write(wrong_path, wrong_source);
  auto wrong = LoadCandidateFile(wrong_path, "cpu");
  ASSERT_TRUE(wrong.ok());

  EvalOptions o;
  o.device = "cpu";
  o.policy = Policy::kAny;
  o.time_compile = false;
  o.use_baseline_cache = false;
  o.min_samples = 3;
  o.min_timing_seconds = 0.05;
  o.max_timing_seconds = 0.5;
  o.scratch_root = root_ / "scratch";
  Evaluator evaluator(o);
  EvaluationSession session(root_ / "session", /*reuse=*/true);

  EvalResult first = evaluator.Evaluate(*task, *good, &session);
  ASSERT_TRUE(first.correct) << first.error.value_or("");
  EXPECT_EQ(first.extra["session"]["reference_evaluation"], 1);

  EvalResult second = evaluator.Evaluate(*task, *wrong, &session);
  EXPECT_TRUE(second.compiled);
  EXPECT_FALSE(second.correct);  // compared against the kept reference outputs
  EXPECT_EQ(second.extra["session"]["reference_evaluation"], 2);
  // Its process was started (and warmed up) while the first was checked.
  EXPECT_EQ(first.extra["session"]["spare_candidate"], false);
  EXPECT_EQ(second.extra["session"]["spare_candidate"], true);

  // An input file emptied between evaluations is written again, not used.
  fs::path inputs = session.io_dir() / "inputs_2.pt";
  ASSERT_TRUE(fs::exists(inputs));
  const auto size = fs::file_size(inputs);
  Write(inputs, "");
  EvalResult third = evaluator.Evaluate(*task, *good, &session);
  EXPECT_TRUE(third.correct) << third.error.value_or("");
  EXPECT_EQ(third.extra["session"]["reference_evaluation"], 3);
  EXPECT_EQ(fs::file_size(inputs), size);
  EXPECT_EQ(third.max_abs_err, first.max_abs_err);

  // The same candidate, one-off: the same verdict and errors.
  EvalResult alone = evaluator.Evaluate(*task, *good);
  EXPECT_TRUE(alone.correct);
  EXPECT_EQ(alone.extra["session"]["reference_evaluation"], 1);
  EXPECT_EQ(alone.max_abs_err, first.max_abs_err);
}

}  // namespace
}  // namespace kforge
