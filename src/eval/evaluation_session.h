// EvaluationSession: what one evaluation worker keeps from one candidate of a
// task to the next. Starting the reference process, building Model, running
// its trials and building its torch.compile program cost the same for every
// candidate of a task: a session pays for them once, and each evaluation then
// does only the candidate's side. It also starts the next candidate's process
// ahead (Python and torch imported, nothing of the candidate loaded), so that
// start-up is not on the GPU's critical path either. Without reuse it is a
// one-off: everything is stopped and removed at the end of the evaluation.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <deque>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "eval/harness_process.h"
#include "eval/sample_stats.h"

namespace kforge {

class EvaluationSession {
 public:
  // `dir` holds the processes' scratch directories and the input files the
  // reference writes; it is created on first use and removed with the session.
  EvaluationSession(std::filesystem::path dir, bool reuse);
  ~EvaluationSession();
  EvaluationSession(const EvaluationSession&) = delete;
  EvaluationSession& operator=(const EvaluationSession&) = delete;

  bool reuse() const { return reuse_; }
  const std::filesystem::path& dir() const { return dir_; }
  std::filesystem::path io_dir() const { return dir_ / "io"; }

  // The running reference process loaded for `key` (the task and every
  // option its answers depend on), or nullptr: a process for another key,
  // or one that died, is stopped first.
  HarnessProcess* Adopt(const std::string& key);
  // Takes a newly started reference process for `key`.
  HarnessProcess* Install(HarnessProcess process, const std::string& key);
  // Its answer to `load` (the device it found), for the evaluations that adopt it.
  const nlohmann::json& load_reply() const { return load_reply_; }
  void set_load_reply(nlohmann::json reply) { load_reply_ = std::move(reply); }
  // Evaluations that used the current reference process, this one included.
  int uses() const { return uses_; }

  // The best accepted speedup over eager measured against the current
  // reference process, the racing rule's target (sample_stats.h): a later
  // candidate clearly below it ends its timing window early. Forgotten with
  // the reference process.
  const std::optional<RatioEstimate>& best_speedup() const { return best_speedup_; }
  void OfferSpeedup(const RatioEstimate& speedup);

  // Input files the reference wrote. One is reused only while it is exactly
  // as written: same inode, size, modification and status-change times (the
  // status-change time cannot be set back from user space, so an untrusted
  // candidate that rewrote the file between evaluations is noticed).
  bool FileIntact(const std::filesystem::path& path) const;
  void RecordFile(const std::filesystem::path& path);
  // Removes a file unless the session keeps it for later evaluations.
  void DropFile(const std::filesystem::path& path);

  // Spare candidate processes: started ahead for later evaluations (with
  // reuse only), each sent `warm` (CUDA context, lazy imports; candidate.py)
  // without waiting for its reply. A warm-up takes longer than one
  // evaluation's checks, so several warm at once, and each is stopped
  // (SIGSTOP) for every timing window it would otherwise run beside.
  //
  // Tops the pool up to `pool_size` spares (`options.scratch_dir` is chosen
  // here).
  void StartSpareCandidates(const HarnessProcess::Options& options, const nlohmann::json& warm,
                            int pool_size);
  // Before a timing window: spares still warming up are stopped; warm ones
  // wait on their channel and do nothing anyway. Returns how many were stopped.
  int PauseSpares();
  // After the window: the stopped spares go on.
  void ResumeSpares();
  // A spare that has warmed up (the oldest one, if none has yet: the caller
  // waits for its warm-up), or nothing. The caller owns it and removes its
  // scratch dir (`*scratch_dir`).
  std::optional<HarnessProcess> TakeSpareCandidate(std::filesystem::path* scratch_dir);
  int spare_count() const { return static_cast<int>(spares_.size()); }

  // Stops the processes and forgets the files (a reference failure).
  void Discard();

 private:
  struct FileStamp {
    ino_t inode = 0;
    off_t size = 0;
    int64_t mtime_ns = 0, ctime_ns = 0;
    bool operator==(const FileStamp&) const = default;
  };
  static std::optional<FileStamp> Stamp(const std::filesystem::path& path);
  struct Spare {
    HarnessProcess process;
    std::filesystem::path dir;
    bool warming = true;  // `warm` sent, reply not read yet
    bool paused = false;
  };
  // Reads a spare's warm-up reply if it is there (or, with `wait`, waits for
  // it); false when the spare failed and must go. Never called on a stopped
  // spare: they are stopped only inside a SparesPaused scope.
  static bool Settle(Spare& spare, bool wait);
  // Settles every spare without waiting; the failed ones go.
  void SettleSpares();
  static void StopSpare(Spare& spare);
  void StopSpares();

  std::filesystem::path dir_;
  bool reuse_;
  std::optional<HarnessProcess> reference_;
  std::string key_;
  nlohmann::json load_reply_;
  int uses_ = 0;
  std::optional<RatioEstimate> best_speedup_;
  std::map<std::string, FileStamp> files_;
  std::deque<Spare> spares_;  // oldest first
  int spares_started_ = 0;
};

// The spares stopped for one measurement (a timing window, the ceilings of
// the speed-of-light floor), continued when it ends, however it ends.
class SparesPaused {
 public:
  explicit SparesPaused(EvaluationSession& session)
      : session_(session), count_(session.PauseSpares()) {}
  ~SparesPaused() { session_.ResumeSpares(); }
  SparesPaused(const SparesPaused&) = delete;
  SparesPaused& operator=(const SparesPaused&) = delete;
  int count() const { return count_; }  // how many were still warming up

 private:
  EvaluationSession& session_;
  int count_;
};

}  // namespace kforge
