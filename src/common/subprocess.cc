#include "common/subprocess.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <net/if.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

extern char** environ;

namespace kforge {

namespace {

// In a fresh network namespace "lo" exists but is down. Raw syscalls only:
// this runs between fork and exec.
void BringLoopbackUp() {
  int fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return;
  ifreq req{};
  std::memcpy(req.ifr_name, "lo", 3);
  if (::ioctl(fd, SIOCGIFFLAGS, &req) == 0) {
    req.ifr_flags = static_cast<short>(req.ifr_flags | IFF_UP | IFF_RUNNING);
    ::ioctl(fd, SIOCSIFFLAGS, &req);
  }
  ::close(fd);
}

}  // namespace

namespace {

constexpr int kChildControlIn = 3;   // the child reads commands here
constexpr int kChildControlOut = 4;  // the child writes replies here

// Bytes the forked child sends on the report pipe before exec.
constexpr char kReportIsolated = 'N';
constexpr char kReportNotIsolated = 'W';
constexpr char kReportExecFailed = 'E';

void WriteAll(int fd, const void* data, size_t n) {
  const char* p = static_cast<const char*>(data);
  while (n > 0) {
    ssize_t w = ::write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return;
    p += w;
    n -= static_cast<size_t>(w);
  }
}

[[noreturn]] void ChildFail(int report_fd, int err) {
  char buf[1 + sizeof(int)];
  buf[0] = kReportExecFailed;
  std::memcpy(buf + 1, &err, sizeof(int));
  WriteAll(report_fd, buf, sizeof(buf));
  ::_exit(127);
}

int OpenForWrite(const std::filesystem::path& p) {
  return ::open(p.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
}

uint64_t RssBytesOfGroup(pid_t pgid) {
  uint64_t total = 0;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/proc", ec)) {
    const std::string name = entry.path().filename().string();
    if (name.empty() || name[0] < '0' || name[0] > '9') continue;
    std::ifstream stat(entry.path() / "stat");
    std::string line;
    if (!std::getline(stat, line)) continue;
    // Fields after the parenthesised command: state ppid pgrp ...
    auto close = line.rfind(')');
    if (close == std::string::npos) continue;
    std::istringstream rest(line.substr(close + 2));
    std::string state;
    long ppid = 0, pgrp = 0;
    rest >> state >> ppid >> pgrp;
    if (pgrp != pgid) continue;
    std::ifstream statm(entry.path() / "statm");
    uint64_t size = 0, resident = 0;
    statm >> size >> resident;
    total += resident * static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
  }
  return total;
}

}  // namespace

std::string ExitInfo::Describe() const {
  if (exited) return fmt::format("exited with code {}", exit_code);
  if (signal != 0) return fmt::format("killed by signal {} ({})", signal, ::strsignal(signal));
  return "still running";
}

Result<ChildProcess> ChildProcess::Spawn(const SpawnSpec& spec) {
  if (spec.argv.empty()) return Error::Internal("Spawn: empty argv");
  std::error_code ec;
  if (!spec.working_dir.empty()) std::filesystem::create_directories(spec.working_dir, ec);

  int to_child[2], from_child[2], report[2];
  if (::pipe2(to_child, O_CLOEXEC) != 0 || ::pipe2(from_child, O_CLOEXEC) != 0 ||
      ::pipe2(report, O_CLOEXEC) != 0) {
    return Error::Io(fmt::format("pipe2 failed: {}", std::strerror(errno)));
  }
  int out_fd = spec.stdout_path.empty() ? ::open("/dev/null", O_WRONLY | O_CLOEXEC)
                                        : OpenForWrite(spec.stdout_path);
  int err_fd = spec.stderr_path.empty() ? -1 : OpenForWrite(spec.stderr_path);
  if (out_fd < 0 || (!spec.stderr_path.empty() && err_fd < 0)) {
    return Error::Io(fmt::format("cannot open child log files in {}: {}",
                                 spec.stdout_path.parent_path().string(), std::strerror(errno)));
  }

  // Everything the child needs is prepared before fork: after it, only
  // async-signal-safe calls.
  std::vector<std::string> env_strings;
  for (char** e = environ; *e != nullptr; ++e) {
    std::string kv(*e);
    std::string key = kv.substr(0, kv.find('='));
    bool drop = spec.env_set.count(key) > 0;
    for (const auto& u : spec.env_unset) drop = drop || u == key;
    if (!drop) env_strings.push_back(std::move(kv));
  }
  for (const auto& [k, v] : spec.env_set) env_strings.push_back(k + "=" + v);
  std::vector<char*> envp;
  for (auto& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::vector<std::string> argv_copy = spec.argv;
  std::vector<char*> argv;
  for (auto& a : argv_copy) argv.push_back(a.data());
  argv.push_back(nullptr);
  const std::string workdir = spec.working_dir.string();
  const SandboxOptions sb = spec.sandbox;

  pid_t pid = ::fork();
  if (pid < 0) return Error::Io(fmt::format("fork failed: {}", std::strerror(errno)));
  if (pid == 0) {
    ::setpgid(0, 0);
    // Default signal dispositions: the parent may have ignored SIGPIPE.
    ::signal(SIGPIPE, SIG_DFL);
    ::signal(SIGINT, SIG_DFL);
    ::signal(SIGTERM, SIG_DFL);
    // Move the channel fds to their fixed numbers (via high numbers first,
    // so no dup2 overwrites an fd we still need).
    int in_hi = ::fcntl(to_child[0], F_DUPFD, 100);
    int out_hi = ::fcntl(from_child[1], F_DUPFD, 100);
    if (in_hi < 0 || out_hi < 0) ChildFail(report[1], errno);
    if (::dup2(in_hi, kChildControlIn) < 0 || ::dup2(out_hi, kChildControlOut) < 0) {
      ChildFail(report[1], errno);
    }
    ::dup2(out_fd, STDOUT_FILENO);
    if (err_fd >= 0) ::dup2(err_fd, STDERR_FILENO);
    int devnull = ::open("/dev/null", O_RDONLY);
    if (devnull >= 0) ::dup2(devnull, STDIN_FILENO);
    if (!workdir.empty() && ::chdir(workdir.c_str()) != 0) ChildFail(report[1], errno);
    if (sb.address_space_bytes) {
      rlimit rl{*sb.address_space_bytes, *sb.address_space_bytes};
      ::setrlimit(RLIMIT_AS, &rl);
    }
    if (sb.cpu_seconds) {
      rlimit rl{*sb.cpu_seconds, *sb.cpu_seconds};
      ::setrlimit(RLIMIT_CPU, &rl);
    }
    rlimit core{0, 0};
    ::setrlimit(RLIMIT_CORE, &core);
    char report_byte = kReportNotIsolated;
    if (sb.isolate_network) {
      if (::unshare(CLONE_NEWNET) == 0 || ::unshare(CLONE_NEWUSER | CLONE_NEWNET) == 0) {
        report_byte = kReportIsolated;
        if (sb.loopback_up) BringLoopbackUp();
      } else if (sb.require_network_isolation) {
        ChildFail(report[1], errno);
      }
    }
    WriteAll(report[1], &report_byte, 1);
    // Close every inherited fd above the channel (the report pipe is CLOEXEC
    // and must stay open until exec).
    for (int fd = kChildControlOut + 1; fd < 1024; ++fd) {
      if (fd != report[1]) ::close(fd);
    }
    ::execvpe(argv[0], argv.data(), envp.data());
    ChildFail(report[1], errno);
  }

  ::close(to_child[0]);
  ::close(from_child[1]);
  ::close(report[1]);
  ::close(out_fd);
  if (err_fd >= 0) ::close(err_fd);

  ChildProcess child;
  child.pid_ = pid;
  child.to_child_ = to_child[1];
  child.from_child_ = from_child[0];
  child.rss_limit_ = sb.rss_limit_bytes;

  // Read the report until EOF (exec closes it).
  std::string report_bytes;
  char buf[64];
  for (;;) {
    ssize_t n = ::read(report[0], buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    report_bytes.append(buf, static_cast<size_t>(n));
  }
  ::close(report[0]);
  if (!report_bytes.empty() && report_bytes.back() != kReportIsolated &&
      report_bytes.back() != kReportNotIsolated) {
    // Exec (or setup) failed: the last 1+sizeof(int) bytes say why.
    int err = 0;
    auto pos = report_bytes.rfind(kReportExecFailed);
    if (pos != std::string::npos && report_bytes.size() >= pos + 1 + sizeof(int)) {
      std::memcpy(&err, report_bytes.data() + pos + 1, sizeof(int));
    }
    child.Kill();
    return Error::Io(fmt::format("cannot start '{}': {}", spec.argv[0], std::strerror(err)));
  }
  child.network_isolated_ = report_bytes.find(kReportIsolated) != std::string::npos;
  return child;
}

ChildProcess::ChildProcess(ChildProcess&& o) noexcept {
  *this = std::move(o);
}

ChildProcess& ChildProcess::operator=(ChildProcess&& o) noexcept {
  if (this != &o) {
    if (pid_ > 0) Kill();
    CloseFds();
    pid_ = std::exchange(o.pid_, -1);
    to_child_ = std::exchange(o.to_child_, -1);
    from_child_ = std::exchange(o.from_child_, -1);
    network_isolated_ = o.network_isolated_;
    rss_limit_ = o.rss_limit_;
    read_buffer_ = std::move(o.read_buffer_);
    exit_ = o.exit_;
  }
  return *this;
}

ChildProcess::~ChildProcess() {
  if (pid_ > 0) Kill();
  CloseFds();
}

void ChildProcess::CloseFds() {
  if (to_child_ >= 0) ::close(std::exchange(to_child_, -1));
  if (from_child_ >= 0) ::close(std::exchange(from_child_, -1));
}

Status ChildProcess::SendLine(const std::string& line) {
  if (to_child_ < 0) return Error::Io("control channel closed");
  std::string data = line + "\n";
  const char* p = data.data();
  size_t n = data.size();
  while (n > 0) {
    ssize_t w = ::write(to_child_, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w < 0) return Error::Io(fmt::format("write to child failed: {}", std::strerror(errno)));
    p += w;
    n -= static_cast<size_t>(w);
  }
  return {};
}

Result<std::string> ChildProcess::ReadLine(std::chrono::steady_clock::time_point deadline,
                                           std::chrono::steady_clock::time_point spin_until) {
  for (;;) {
    if (auto nl = read_buffer_.find('\n'); nl != std::string::npos) {
      std::string line = read_buffer_.substr(0, nl);
      read_buffer_.erase(0, nl + 1);
      return line;
    }
    if (from_child_ < 0) return Error::Io("control channel closed");
    auto now = std::chrono::steady_clock::now();
    if (now >= deadline) return Error::Timeout("child did not answer in time");
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now).count();
    pollfd pfd{from_child_, POLLIN, 0};
    int wait_ms = now < spin_until ? 0 : static_cast<int>(std::min<int64_t>(left + 1, 1000));
    int r = ::poll(&pfd, 1, wait_ms);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) return Error::Io(fmt::format("poll failed: {}", std::strerror(errno)));
    if (r == 0) continue;
    char buf[65536];
    ssize_t n = ::read(from_child_, buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      ::close(std::exchange(from_child_, -1));
      return Error::Io("child closed its control channel");
    }
    read_buffer_.append(buf, static_cast<size_t>(n));
  }
}

bool ChildProcess::LineReady() {
  while (read_buffer_.find('\n') == std::string::npos) {
    if (from_child_ < 0) return true;
    pollfd pfd{from_child_, POLLIN, 0};
    int r = ::poll(&pfd, 1, 0);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    char buf[65536];
    ssize_t n = ::read(from_child_, buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return true;  // closed: ReadLine reports it
    read_buffer_.append(buf, static_cast<size_t>(n));
  }
  return true;
}

bool ChildProcess::OverMemoryLimit() const {
  if (!rss_limit_ || pid_ <= 0) return false;
  return RssBytesOfGroup(pid_) > *rss_limit_;
}

bool ChildProcess::TryReap(bool block) {
  if (pid_ <= 0) return true;
  int status = 0;
  pid_t r;
  do {
    r = ::waitpid(pid_, &status, block ? 0 : WNOHANG);
  } while (r < 0 && errno == EINTR);
  if (r == 0) return false;
  ExitInfo info;
  if (r == pid_) {
    if (WIFEXITED(status)) {
      info.exited = true;
      info.exit_code = WEXITSTATUS(status);
    } else if (WIFSIGNALED(status)) {
      info.signal = WTERMSIG(status);
    }
  }
  exit_ = info;
  pid_ = -1;
  return true;
}

void ChildProcess::Pause() {
  if (pid_ > 0) ::kill(-pid_, SIGSTOP);
}

void ChildProcess::Resume() {
  if (pid_ > 0) ::kill(-pid_, SIGCONT);
}

ExitInfo ChildProcess::Kill() {
  if (pid_ > 0) {
    // The group holds the child and anything it started (compilers, threads
    // in other processes); all of it goes.
    ::kill(-pid_, SIGKILL);
    ::kill(pid_, SIGKILL);
    TryReap(true);
  }
  CloseFds();
  return exit_.value_or(ExitInfo{});
}

ExitInfo ChildProcess::WaitOrKill(std::chrono::steady_clock::time_point deadline) {
  while (pid_ > 0 && std::chrono::steady_clock::now() < deadline) {
    if (TryReap(false)) break;
    ::usleep(10000);
  }
  if (pid_ > 0) return Kill();
  // Stragglers of the group are killed too.
  CloseFds();
  return exit_.value_or(ExitInfo{});
}

Result<CommandOutput> RunCommand(const SpawnSpec& spec_in, std::chrono::milliseconds timeout) {
  auto dir = std::filesystem::temp_directory_path();
  SpawnSpec spec = spec_in;
  std::string out_path =
      (dir / fmt::format("kforge-cmd-{}-{}.out", ::getpid(),
                         std::chrono::steady_clock::now().time_since_epoch().count()))
          .string();
  spec.stdout_path = out_path;
  auto child = ChildProcess::Spawn(spec);
  if (!child) return child.error();
  CommandOutput out;
  auto deadline = std::chrono::steady_clock::now() + timeout;
  out.exit = child->WaitOrKill(deadline);
  out.timed_out = !out.exit.exited && std::chrono::steady_clock::now() >= deadline;
  std::ifstream in(out_path);
  std::stringstream ss;
  ss << in.rdbuf();
  out.stdout_text = ss.str();
  std::error_code ec;
  std::filesystem::remove(out_path, ec);
  return out;
}

}  // namespace kforge
