// HarnessProcess: one Python harness process (the clean reference or an
// untrusted candidate) and the typed edge of its JSON-lines protocol. JSON
// is parsed here and handed on as nlohmann::json only to the evaluator.
#pragma once

#include <chrono>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "common/result.h"
#include "common/subprocess.h"

namespace kforge {

// Why a harness call failed, in the terms the evaluator decides on.
enum class HarnessFailure {
  kNone,
  kBadTask,         // the task itself is malformed: exit code 2
  kCandidateError,  // the candidate raised (compile error, CUDA fault, wrong type ...)
  kCrashed,         // the process died (segfault, abort, OOM kill)
  kTimeout,         // no answer before the deadline: the process is killed
  kMemoryLimit,     // over its memory limit: the process is killed
  kInternal,        // a harness bug or an environment problem
};

struct HarnessError {
  HarnessFailure failure = HarnessFailure::kInternal;
  std::string message;
};

// The last non-empty line of `text` (a process's stderr tail), its start
// kept when longer than `max_chars`: where an exception's type and message
// are (PyTorch's out-of-memory line runs to ~600 characters).
std::string LastLine(const std::string& text, size_t max_chars);

struct SampleTiming {
  double host_ms = 0;    // kforge's clock, go → done
  double event_ms = -1;  // mean CUDA-event time per call on its current stream (-1 on CPU)
};

class HarnessProcess {
 public:
  enum class Role { kReference, kCandidate };

  struct Options {
    Role role = Role::kReference;
    std::filesystem::path scratch_dir;
    SandboxOptions sandbox;
    std::string label;  // for messages: "reference process" / "candidate process"
    std::map<std::string, std::string> env;  // set in the process's environment
  };

  static Result<HarnessProcess> Start(const Options& options);

  // Sends one command and waits for its reply. Any failure leaves the
  // process killed, except a kBadTask/kCandidateError reply it sent itself.
  // The reply JSON (with "ok": true) or a HarnessError.
  std::variant<nlohmann::json, HarnessError> Call(const nlohmann::json& command,
                                                  std::chrono::milliseconds timeout);
  // Call() in two halves, for a command whose reply is collected later (a
  // process warming up while other work goes on). Exactly one Receive() per
  // Send() that succeeded.
  std::optional<HarnessError> Send(const nlohmann::json& command);
  std::variant<nlohmann::json, HarnessError> Receive(std::chrono::milliseconds timeout);
  // A command whose reply nobody waits for now (work the process can do
  // while the caller does other things): the next Send(), Call() or
  // Sample() first reads that reply, waiting up to `timeout` for it, so the
  // protocol stays in step whoever talks to the process next. A failed
  // reply is that next call's error.
  std::optional<HarnessError> SendAhead(const nlohmann::json& command,
                                        std::chrono::milliseconds timeout);
  // Without waiting: true when Receive() would return at once (a reply is
  // there, or the process is gone).
  bool ReplyReady() { return !alive_ || child_.LineReady(); }

  // Poll for `done` without sleeping (GPU timing on a dedicated host). Off
  // on a CPU device, where a spinning timer steals a core from the program.
  void set_spin_for_samples(bool spin) { spin_for_samples_ = spin; }

  // One timed sample of `program`: `calls` back-to-back calls, each after a
  // cache flush (see harness/kforge_harness/timing.py).
  std::variant<SampleTiming, HarnessError> Sample(const std::string& program, int calls,
                                                  std::chrono::milliseconds timeout);

  // Stops every process of the harness's group (its threads and anything it
  // started) until Thaw(). Only between calls: a frozen process answers
  // nothing.
  void Freeze() { child_.Pause(); }
  void Thaw() { child_.Resume(); }

  bool alive() const { return alive_; }
  bool network_isolated() const { return child_.network_isolated(); }
  // Tail of the process's stderr log, for failure reports.
  std::string StderrTail(size_t max_bytes = 2000) const;
  void Stop();
  // SIGKILL to its group, without asking: for a process that holds nothing
  // (a spare), whose `quit` would wait for its warm-up to end.
  void Kill();

 private:
  explicit HarnessProcess(ChildProcess child, Options options)
      : child_(std::move(child)), options_(std::move(options)) {}
  HarnessError Fail(HarnessFailure f, std::string message);
  std::variant<std::string, HarnessError> ReadLineWatched(
      std::chrono::steady_clock::time_point deadline,
      std::chrono::steady_clock::time_point spin_until = {});

  // Reads the reply of a SendAhead() command, if one is outstanding.
  std::optional<HarnessError> CollectAhead();

  ChildProcess child_;
  Options options_;
  std::optional<std::chrono::milliseconds> ahead_timeout_;  // a reply outstanding
  bool spin_for_samples_ = false;
  bool alive_ = true;
};

std::string HarnessFailureName(HarnessFailure f);

}  // namespace kforge
