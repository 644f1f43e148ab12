// The subprocess layer: spawn a child in its own process group with rlimits,
// an optional fresh network namespace and a scratch directory; talk to it
// over a line-oriented control channel on dedicated pipes (fds 3 and 4 in the
// child, so a candidate's own prints never corrupt the protocol); kill the
// whole group on timeout; reap it.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/result.h"

namespace kforge {

struct SandboxOptions {
  // RLIMIT_AS in bytes. CUDA reserves huge virtual ranges, so GPU children
  // use `rss_limit_bytes` (polled) instead.
  std::optional<uint64_t> address_space_bytes;
  std::optional<uint64_t> rss_limit_bytes;
  std::optional<uint64_t> cpu_seconds;
  // Run the child in a fresh network namespace (no interfaces but lo, down).
  bool isolate_network = false;
  // When isolation is asked for but the kernel refuses, fail instead of warn.
  bool require_network_isolation = false;
  // Bring the namespace's loopback interface up: still no route out, but
  // processes inside can talk to each other (ncu and its target do).
  bool loopback_up = false;
};

struct SpawnSpec {
  std::vector<std::string> argv;
  std::filesystem::path working_dir;  // created if missing
  std::map<std::string, std::string> env_set;
  std::vector<std::string> env_unset;
  std::filesystem::path stdout_path;  // child's fd 1 (empty: /dev/null)
  std::filesystem::path stderr_path;  // child's fd 2 (empty: inherit)
  SandboxOptions sandbox;
};

struct ExitInfo {
  bool exited = false;  // normal exit
  int exit_code = 0;    // when exited
  int signal = 0;       // when killed by a signal
  std::string Describe() const;
};

// A running child with a control channel. Not copyable; the destructor kills
// and reaps the group, so a forgotten child never outlives its owner.
class ChildProcess {
 public:
  static Result<ChildProcess> Spawn(const SpawnSpec& spec);

  ChildProcess(ChildProcess&& other) noexcept;
  ChildProcess& operator=(ChildProcess&& other) noexcept;
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;
  ~ChildProcess();

  pid_t pid() const { return pid_; }
  bool network_isolated() const { return network_isolated_; }

  // One line (without '\n') to the child's control input.
  Status SendLine(const std::string& line);
  // The next line from the child's control output, waiting until `deadline`.
  // kTimeout when it passes; kIo when the child closed the channel (died).
  // Until `spin_until` it polls without sleeping: a timer that spans the
  // child's answer must not include the scheduler's wake-up latency.
  Result<std::string> ReadLine(std::chrono::steady_clock::time_point deadline,
                               std::chrono::steady_clock::time_point spin_until = {});
  // Without waiting: true when ReadLine would return at once (a whole line
  // is buffered, or the channel closed).
  bool LineReady();

  // Polls the child's resident set size (for rss_limit_bytes); true if over.
  bool OverMemoryLimit() const;
  // SIGSTOP / SIGCONT to the whole process group: nothing in it runs in
  // between. (Should kforge die meanwhile, the orphaned group gets SIGCONT
  // from the kernel.)
  void Pause();
  void Resume();
  // SIGKILL to the whole process group, then reap. Idempotent.
  ExitInfo Kill();
  // Waits for a natural exit until deadline, else kills.
  ExitInfo WaitOrKill(std::chrono::steady_clock::time_point deadline);
  std::optional<ExitInfo> exit_info() const { return exit_; }

 private:
  ChildProcess() = default;
  void CloseFds();
  bool TryReap(bool block);

  pid_t pid_ = -1;
  int to_child_ = -1;
  int from_child_ = -1;
  bool network_isolated_ = false;
  std::optional<uint64_t> rss_limit_;
  std::string read_buffer_;
  std::optional<ExitInfo> exit_;
};

// Runs a command to completion, capturing stdout (stderr to a file or
// inherited). For short trusted helpers such as the static checker.
struct CommandOutput {
  ExitInfo exit;
  std::string stdout_text;
  bool timed_out = false;
};
Result<CommandOutput> RunCommand(const SpawnSpec& spec, std::chrono::milliseconds timeout);

}  // namespace kforge
