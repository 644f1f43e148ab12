#include "eval/evaluation_session.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
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
  // The example task, and the reference itself as its candidate.
  static Task ExampleTask() {
    auto task =
        LoadTaskFile(fs::path(KFORGE_SOURCE_DIR) / "examples/tasks/fused_bias_relu6_scale.py");
    EXPECT_TRUE(task.ok()) << task.error().message;
    return task.ok() ? *task : Task{};
  }
  static Candidate ReferenceCandidate() {
    auto c = LoadCandidateFile(
        fs::path(KFORGE_SOURCE_DIR) / "examples/candidates/fused_bias_relu6_scale_reference.py",
        "cpu");
    EXPECT_TRUE(c.ok()) << c.error().message;
    return c.ok() ? *c : Candidate{};
  }
  // The reference candidate with `appended` added to its source, written to
  // `name` in the test's directory.
  Candidate ReferenceWith(const std::string& name, const std::string& appended) const {
    fs::path path = root_ / name;
    Write(path, ReferenceCandidate().source + appended);
    auto c = LoadCandidateFile(path, "cpu");
    EXPECT_TRUE(c.ok()) << c.error().message;
    return c.ok() ? *c : Candidate{};
  }
  // A short CPU evaluation of any policy, timed without torch.compile.
  EvalOptions CpuOptions() const {
    EvalOptions o;
    o.device = "cpu";
    o.policy = Policy::kAny;
    o.time_compile = false;
    o.use_baseline_cache = false;
    o.min_samples = 3;
    o.scratch_root = root_ / "scratch";
    return o;
  }
  // CpuOptions with a window of 0.05 to 0.5 s: enough for the session's bookkeeping.
  EvalOptions ShortWindowOptions() const {
    EvalOptions o = CpuOptions();
    o.min_timing_seconds = 0.05;
    o.max_timing_seconds = 0.5;
    return o;
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

// torch.compile's program is built in the reference process while the first
// candidate is built and loaded (sent ahead, collected by the next reference
// call), then bound to the timed inputs; a later candidate reuses it.
TEST_F(EvaluationSessionTest, TorchCompileIsBuiltAheadThenReused) {
  const Task task = ExampleTask();
  const Candidate good = ReferenceCandidate();
  EvalOptions o = CpuOptions();
  o.time_compile = true;
  o.max_timing_seconds = 2;
  Evaluator evaluator(o);
  EvaluationSession session(root_ / "session", /*reuse=*/true);

  EvalResult first = evaluator.Evaluate(task, good, &session);
  ASSERT_TRUE(first.accepted) << first.error.value_or("");
  EXPECT_FALSE(first.extra.contains("torch_compile_error")) << first.extra.dump();
  EXPECT_TRUE(first.extra.value("torch_compile_ahead", false));
  EXPECT_FALSE(first.extra.value("torch_compile_reused", false));
  EXPECT_GT(first.extra.value("torch_compile_seconds", 0.0), 0.0);
  ASSERT_TRUE(first.compile_ms.has_value());
  EXPECT_GT(first.compile_ms->stats.median, 0.0);

  EvalResult second = evaluator.Evaluate(task, good, &session);
  ASSERT_TRUE(second.accepted) << second.error.value_or("");
  EXPECT_TRUE(second.extra.value("torch_compile_reused", false));
  EXPECT_FALSE(second.extra.value("torch_compile_ahead", false));
  ASSERT_TRUE(second.compile_ms.has_value());
  EXPECT_EQ(second.extra["session"]["reference_evaluation"], 2);
}

// An agent's checks of a draft (EvalDepth): `build` stops after the build
// and load, `correctness` after the trials, neither times nor accepts; the
// full evaluation after them, in the same session, is the one of record.
TEST_F(EvaluationSessionTest, DraftChecksStopAtTheirDepth) {
  const Task task = ExampleTask();
  const Candidate good = ReferenceCandidate();
  EvaluationSession session(root_ / "session", /*reuse=*/true);
  EvalOptions o = CpuOptions();

  o.depth = EvalDepth::kBuild;
  EvalResult built = Evaluator(o).Evaluate(task, good, &session);
  EXPECT_TRUE(built.compiled) << built.error.value_or("");
  EXPECT_EQ(built.trials, 0);
  EXPECT_FALSE(built.correct);
  EXPECT_FALSE(built.accepted);
  EXPECT_FALSE(built.eager_ms.has_value());
  EXPECT_EQ(built.extra.value("depth", ""), "build");
  EXPECT_EQ(built.milestone, -1);

  o.depth = EvalDepth::kCorrectness;
  EvalResult verified = Evaluator(o).Evaluate(task, good, &session);
  EXPECT_TRUE(verified.correct) << verified.error.value_or("");
  EXPECT_GT(verified.trials, 0);
  EXPECT_FALSE(verified.accepted);
  EXPECT_FALSE(verified.candidate_ms.has_value());
  EXPECT_FALSE(verified.eager_ms.has_value());
  EXPECT_FALSE(verified.extra["phase_seconds"].contains("timing"));
  EXPECT_EQ(verified.extra.value("depth", ""), "correctness");

  o.depth = EvalDepth::kFull;
  EvalResult full = Evaluator(o).Evaluate(task, good, &session);
  EXPECT_TRUE(full.accepted) << full.error.value_or("");
  EXPECT_TRUE(full.candidate_ms.has_value());
  EXPECT_FALSE(full.extra.contains("depth"));
}

// Real harness processes on the CPU: a task's candidates evaluated through
// one session agree with one-off evaluations, and the second is answered by
// the same reference process.
TEST_F(EvaluationSessionTest, CandidatesOfATaskShareTheReference) {
  const Task task = ExampleTask();
  const Candidate good = ReferenceCandidate();
  const Candidate wrong =
      ReferenceWith("wrong.py",
                    "\n_orig = ModelNew.forward\n"
                    "ModelNew.forward = lambda self, *a: _orig(self, *a) * 1.01\n");
  ASSERT_FALSE(::testing::Test::HasFailure());

  EvalOptions o = ShortWindowOptions();
  Evaluator evaluator(o);
  EvaluationSession session(root_ / "session", /*reuse=*/true);

  EvalResult first = evaluator.Evaluate(task, good, &session);
  ASSERT_TRUE(first.correct) << first.error.value_or("");
  EXPECT_EQ(first.extra["session"]["reference_evaluation"], 1);

  EvalResult second = evaluator.Evaluate(task, wrong, &session);
  EXPECT_TRUE(second.compiled);
  EXPECT_FALSE(second.correct);  // compared against the kept reference outputs
  EXPECT_EQ(second.extra["session"]["reference_evaluation"], 2);
  // Its process was started (and warmed up) while the first was checked;
  // the pool is topped up again after every take.
  EXPECT_EQ(first.extra["session"]["spare_candidate"], false);
  EXPECT_EQ(second.extra["session"]["spare_candidate"], true);
  EXPECT_EQ(session.spare_count(), o.spare_candidates);
  EXPECT_TRUE(first.extra["session"]["spares_paused"].is_number_integer());

  // An input file emptied between evaluations is written again, not used.
  fs::path inputs = session.io_dir() / "inputs_2.pt";
  ASSERT_TRUE(fs::exists(inputs));
  const auto size = fs::file_size(inputs);
  Write(inputs, "");
  EvalResult third = evaluator.Evaluate(task, good, &session);
  EXPECT_TRUE(third.correct) << third.error.value_or("");
  EXPECT_EQ(third.extra["session"]["reference_evaluation"], 3);
  EXPECT_EQ(fs::file_size(inputs), size);
  EXPECT_EQ(third.max_abs_err, first.max_abs_err);

  // The same candidate, one-off: the same verdict and errors.
  EvalResult alone = evaluator.Evaluate(task, good);
  EXPECT_TRUE(alone.correct);
  EXPECT_EQ(alone.extra["session"]["reference_evaluation"], 1);
  EXPECT_EQ(alone.max_abs_err, first.max_abs_err);
}

// The reference failing inside the timing window (its harness answers the
// failed sample and lives on) ends the evaluation as a reference failure, and
// the session forgets that reference: nothing it kept is trusted after a
// failure, the same as after a failed command.
TEST_F(EvaluationSessionTest, AReferenceFailingInTheWindowIsDiscarded) {
  const Task example = ExampleTask();
  fs::path path = root_ / "fails_when_timed.py";
  Write(path, example.source + R"PY(

import inspect

_forward = Model.forward


def _fails_when_timed(self, x):
    if any(f.function == "handle_arm" for f in inspect.stack()):
        raise RuntimeError("the reference fails when timed")
    return _forward(self, x)


Model.forward = _fails_when_timed
)PY");
  auto task = LoadTaskFile(path);
  ASSERT_TRUE(task.ok()) << task.error().message;
  const Candidate good = ReferenceCandidate();
  ASSERT_FALSE(::testing::Test::HasFailure());

  EvalOptions o = ShortWindowOptions();
  Evaluator evaluator(o);
  EvaluationSession session(root_ / "session", /*reuse=*/true);
  try {
    EvalResult r = evaluator.Evaluate(*task, good, &session);
    FAIL() << "the evaluation went on: " << r.error.value_or("no error");
  } catch (const OperationError& e) {
    EXPECT_NE(e.error.message.find("the reference fails when timed"), std::string::npos)
        << e.error.message;
  }
  EXPECT_EQ(session.uses(), 0);  // discarded, not kept for the next candidate
}

// Spares on their own: stopped while they warm up (a process that has just
// started cannot have imported torch yet), continued, taken warm; and a
// session ending with stopped spares ends them at once (killed: they hold
// nothing, and a graceful `quit` would wait for their warm-up).
TEST_F(EvaluationSessionTest, SparesArePausedResumedAndStopped) {
  EvaluationSession session(root_ / "spares", /*reuse=*/true);
  HarnessProcess::Options o;
  o.role = HarnessProcess::Role::kCandidate;
  o.label = "candidate process";
  const nlohmann::json warm = {{"cmd", "warm"}, {"device", "cpu"}, {"index", 0}};
  session.StartSpareCandidates(o, warm, 2);
  ASSERT_EQ(session.spare_count(), 2);
  EXPECT_EQ(session.PauseSpares(), 2);
  EXPECT_EQ(session.PauseSpares(), 0);  // already stopped
  ::usleep(200000);
  session.ResumeSpares();
  fs::path scratch;
  std::optional<HarnessProcess> taken = session.TakeSpareCandidate(&scratch);
  ASSERT_TRUE(taken.has_value());
  EXPECT_TRUE(taken->alive());
  EXPECT_TRUE(fs::is_directory(scratch));
  EXPECT_EQ(session.spare_count(), 1);
  taken->Stop();
  session.StartSpareCandidates(o, warm, 2);  // topped up again
  EXPECT_EQ(session.spare_count(), 2);
  EXPECT_GE(session.PauseSpares(), 1);  // at least the new one is still warming
  const auto t0 = std::chrono::steady_clock::now();
  session.Discard();
  EXPECT_EQ(session.spare_count(), 0);
  // Far below the 5 s a process that does not read `quit` is given.
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(4));
}

// The racing rule on real CPU evaluations: after an accepted candidate set
// the session's best, a correct but clearly slower one stops being timed once
// the window's minimum has passed, although the noise target (set out of
// reach here) is not met; the first ran to the time cap.
TEST_F(EvaluationSessionTest, AClearlySlowerCandidateIsRacedOut) {
  const Task task = ExampleTask();
  const Candidate good = ReferenceCandidate();
  // The same answer, computed six times over.
  const Candidate slow = ReferenceWith("slow.py", R"PY(

_once = ModelNew.forward


def _six_times(self, x):
    for _ in range(5):
        _once(self, x)
    return _once(self, x)


ModelNew.forward = _six_times
)PY");
  ASSERT_FALSE(::testing::Test::HasFailure());

  EvalOptions o = CpuOptions();
  o.target_noise = 1e-9;
  o.min_timing_seconds = 0.3;
  o.max_timing_seconds = 3;
  Evaluator evaluator(o);
  EvaluationSession session(root_ / "session", /*reuse=*/true);

  EvalResult first = evaluator.Evaluate(task, good, &session);
  ASSERT_TRUE(first.accepted) << first.error.value_or("");
  EXPECT_EQ(first.extra["timing_window"]["stopped_by"], "time_cap");
  // Every timed program's noise at the end is recorded; none met the target.
  for (const char* name : {"eager", "candidate"}) {
    const auto& p = first.extra["timing_window"]["programs"][name];
    EXPECT_GE(p["samples"].get<int>(), o.min_samples) << name;
    EXPECT_GT(p["median_ms"].get<double>(), 0) << name;
    EXPECT_GT(p["rel_error"].get<double>(), o.target_noise) << name;
  }
  EXPECT_TRUE(first.extra["timing_window"]["programs"]["noop"]["rel_error"].is_null());
  ASSERT_TRUE(session.best_speedup().has_value());
  EXPECT_DOUBLE_EQ(session.best_speedup()->value, first.speedup_eager.value());

  EvalResult second = evaluator.Evaluate(task, slow, &session);
  ASSERT_TRUE(second.correct) << second.error.value_or("");
  EXPECT_EQ(second.extra["timing_window"]["stopped_by"], "clear_of_best");
  EXPECT_LT(second.extra["timing_window"]["seconds"].get<double>(), o.max_timing_seconds);
  EXPECT_DOUBLE_EQ(second.extra["timing_window"]["session_best_speedup"].get<double>(),
                   first.speedup_eager.value());
  EXPECT_LT(second.speedup_eager.value(), 0.5 * first.speedup_eager.value());
  // The best stays the faster one.
  EXPECT_DOUBLE_EQ(session.best_speedup()->value, first.speedup_eager.value());

  // Without racing the same candidate is timed to the cap.
  EvalOptions no_race = o;
  no_race.race_sigmas = 0;
  EvalResult third = Evaluator(no_race).Evaluate(task, slow, &session);
  ASSERT_TRUE(third.correct);
  EXPECT_EQ(third.extra["timing_window"]["stopped_by"], "time_cap");
}

}  // namespace
}  // namespace kforge
