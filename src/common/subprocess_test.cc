#include "common/subprocess.h"

#include <gtest/gtest.h>
#include <signal.h>

#include <filesystem>
#include <fstream>
#include <optional>
#include <thread>
#include <utility>

namespace kforge {
namespace {

using namespace std::chrono_literals;

TEST(ChildProcessTest, EchoesOverControlChannel) {
  SpawnSpec spec;
  // The child reads fd 3 and answers on fd 4; its stdout goes to /dev/null.
  spec.argv = {"sh", "-c", "echo noise; while read l <&3; do echo \"got $l\" >&4; done"};
  auto child = ChildProcess::Spawn(spec);
  ASSERT_TRUE(child.ok()) << child.error().message;
  ASSERT_TRUE(child->SendLine("hello").ok());
  auto line = child->ReadLine(std::chrono::steady_clock::now() + 5s);
  ASSERT_TRUE(line.ok()) << line.error().message;
  EXPECT_EQ(*line, "got hello");
}

TEST(ChildProcessTest, ReadTimesOutOnSilentChild) {
  SpawnSpec spec;
  spec.argv = {"sleep", "30"};
  auto child = ChildProcess::Spawn(spec);
  ASSERT_TRUE(child.ok());
  auto start = std::chrono::steady_clock::now();
  auto line = child->ReadLine(start + 200ms);
  EXPECT_FALSE(line.ok());
  EXPECT_EQ(line.error().kind, ErrorKind::kTimeout);
  ExitInfo info = child->Kill();
  EXPECT_EQ(info.signal, SIGKILL);
}

// A `sh -c` child that starts a `sleep 60` grandchild in its process group,
// says "ready" on the control channel, then runs `rest`. The child, once it
// is ready, and the grandchild's pid (0 when anything failed).
std::pair<std::optional<ChildProcess>, pid_t> SpawnWithGrandchild(const std::string& name,
                                                                  const std::string& rest) {
  auto dir = std::filesystem::temp_directory_path() / "kforge-subprocess-test";
  std::filesystem::create_directories(dir);
  auto pidfile = dir / (name + ".pid");
  std::filesystem::remove(pidfile);
  SpawnSpec spec;
  spec.argv = {"sh", "-c",
               "sleep 60 & echo $! > " + pidfile.string() + "; echo ready >&4; " + rest};
  auto child = ChildProcess::Spawn(spec);
  if (!child.ok() || !child->ReadLine(std::chrono::steady_clock::now() + 5s).ok()) {
    return {std::nullopt, 0};
  }
  std::ifstream in(pidfile);
  pid_t grandchild = 0;
  in >> grandchild;
  return {std::move(child).value(), grandchild};
}

TEST(ChildProcessTest, KillTakesTheWholeGroup) {
  auto [child, grandchild] = SpawnWithGrandchild("grandchild", "wait");
  ASSERT_TRUE(child.has_value());
  ASSERT_GT(grandchild, 0);
  child->Kill();
  // The grandchild was in the same group: it must be gone (or a zombie being reaped by init).
  bool gone = false;
  for (int i = 0; i < 100 && !gone; ++i) {
    gone = ::kill(grandchild, 0) != 0;
    if (!gone) {
      std::ifstream stat("/proc/" + std::to_string(grandchild) + "/stat");
      std::string s;
      std::getline(stat, s);
      gone = s.find(") Z") != std::string::npos;
    }
    std::this_thread::sleep_for(10ms);
  }
  EXPECT_TRUE(gone);
}

// The state letter of /proc/PID/stat ('S', 'R', 'T' for stopped, ...).
char ProcState(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string s;
  std::getline(stat, s);
  auto close = s.rfind(") ");
  return close == std::string::npos ? '?' : s[close + 2];
}

// Waits up to a second for `pid` to reach (or leave) the stopped state.
bool WaitStopped(pid_t pid, bool stopped) {
  for (int i = 0; i < 100; ++i) {
    if ((ProcState(pid) == 'T') == stopped) return true;
    std::this_thread::sleep_for(10ms);
  }
  return false;
}

TEST(ChildProcessTest, PauseStopsTheWholeGroupUntilResume) {
  auto [child, grandchild] =
      SpawnWithGrandchild("paused-grandchild", "while read l <&3; do echo \"got $l\" >&4; done");
  ASSERT_TRUE(child.has_value());
  ASSERT_GT(grandchild, 0);

  child->Pause();
  EXPECT_TRUE(WaitStopped(child->pid(), true));
  EXPECT_TRUE(WaitStopped(grandchild, true));
  // A stopped child answers nothing; the line waits in the pipe.
  ASSERT_TRUE(child->SendLine("while paused").ok());
  EXPECT_FALSE(child->ReadLine(std::chrono::steady_clock::now() + 200ms).ok());

  child->Resume();
  EXPECT_TRUE(WaitStopped(child->pid(), false));
  EXPECT_TRUE(WaitStopped(grandchild, false));
  auto line = child->ReadLine(std::chrono::steady_clock::now() + 5s);
  ASSERT_TRUE(line.ok()) << line.error().message;
  EXPECT_EQ(*line, "got while paused");
  child->Kill();
}

TEST(ChildProcessTest, MissingProgramIsAnError) {
  SpawnSpec spec;
  spec.argv = {"/nonexistent/program"};
  auto child = ChildProcess::Spawn(spec);
  ASSERT_FALSE(child.ok());
  EXPECT_NE(child.error().message.find("cannot start"), std::string::npos);
}

TEST(ChildProcessTest, ReportsCrashSignal) {
  SpawnSpec spec;
  spec.argv = {"sh", "-c", "kill -SEGV $$"};
  auto child = ChildProcess::Spawn(spec);
  ASSERT_TRUE(child.ok());
  auto line = child->ReadLine(std::chrono::steady_clock::now() + 5s);
  EXPECT_FALSE(line.ok());
  EXPECT_EQ(line.error().kind, ErrorKind::kIo);
  ExitInfo info = child->WaitOrKill(std::chrono::steady_clock::now() + 5s);
  EXPECT_EQ(info.signal, SIGSEGV);
}

TEST(ChildProcessTest, AddressSpaceLimitApplies) {
  SpawnSpec spec;
  spec.argv = {"sh", "-c", "ulimit -v >&4"};
  spec.sandbox.address_space_bytes = 512ull << 20;
  auto child = ChildProcess::Spawn(spec);
  ASSERT_TRUE(child.ok());
  auto line = child->ReadLine(std::chrono::steady_clock::now() + 5s);
  ASSERT_TRUE(line.ok());
  EXPECT_EQ(*line, "524288");  // KiB
}

TEST(RunCommandTest, CapturesStdoutAndExitCode) {
  SpawnSpec spec;
  spec.argv = {"sh", "-c", "echo out; exit 3"};
  auto r = RunCommand(spec, 5s);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->stdout_text, "out\n");
  EXPECT_TRUE(r->exit.exited);
  EXPECT_EQ(r->exit.exit_code, 3);
}

TEST(RunCommandTest, TimesOut) {
  SpawnSpec spec;
  spec.argv = {"sleep", "30"};
  auto r = RunCommand(spec, 100ms);
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->timed_out);
}

// Loopback inside an isolated namespace: a process can talk to itself over
// 127.0.0.1 only when loopback_up is set (ncu needs it to reach its target).
TEST(ChildProcessTest, IsolatedNetworkHasLoopbackOnlyWhenAsked) {
  const std::string probe =
      "import socket\n"
      "try:\n"
      "    s = socket.socket(); s.bind(('127.0.0.1', 0)); s.listen()\n"
      "    socket.create_connection(s.getsockname(), timeout=5); print('up')\n"
      "except OSError:\n"
      "    print('down')\n";
  auto run = [&](bool loopback) -> std::optional<std::string> {
    SpawnSpec spec;
    spec.argv = {"python3", "-c", probe};
    spec.sandbox.isolate_network = true;
    spec.sandbox.loopback_up = loopback;
    auto child = ChildProcess::Spawn(spec);
    if (!child.ok() || !child->network_isolated()) return std::nullopt;
    auto out = RunCommand(spec, 30s);
    if (!out.ok()) return std::nullopt;
    return out->stdout_text;
  };
  auto down = run(false);
  if (!down) GTEST_SKIP() << "network namespaces are not permitted here";
  EXPECT_EQ(*down, "down\n");
  auto up = run(true);
  ASSERT_TRUE(up.has_value());
  EXPECT_EQ(*up, "up\n");
}

}  // namespace
}  // namespace kforge
