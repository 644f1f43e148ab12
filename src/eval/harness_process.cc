#include "eval/harness_process.h"

#include <fmt/format.h>

#include <fstream>
#include <sstream>

#include "common/python_env.h"

namespace kforge {

namespace {

using Clock = std::chrono::steady_clock;
// How often a long wait wakes to check the memory limit.
constexpr auto kWatchInterval = std::chrono::milliseconds(200);
// How long the timer polls for `done` without sleeping: long enough to cover
// sub-millisecond programs exactly, short enough not to burn a core on long
// ones (whose wake-up latency is noise next to their runtime).
constexpr auto kDoneSpin = std::chrono::milliseconds(20);
// A dead process's last stderr line is read from this much of its tail: a
// Python exception's line can be long (PyTorch's out-of-memory one is ~600
// characters, and a cut one loses "CUDA out of memory", which `kforge
// baseline` reads to skip a task that does not fit), and is shown up to
// kMaxLastLineChars.
constexpr size_t kStderrTailForLastLine = 8000;
constexpr size_t kMaxLastLineChars = 1500;

}  // namespace

std::string HarnessFailureName(HarnessFailure f) {
  switch (f) {
    case HarnessFailure::kNone:
      return "none";
    case HarnessFailure::kBadTask:
      return "bad_task";
    case HarnessFailure::kCandidateError:
      return "candidate_error";
    case HarnessFailure::kCrashed:
      return "crashed";
    case HarnessFailure::kTimeout:
      return "timeout";
    case HarnessFailure::kMemoryLimit:
      return "memory_limit";
    case HarnessFailure::kInternal:
      return "internal";
  }
  return "internal";
}

Result<HarnessProcess> HarnessProcess::Start(const Options& options) {
  SpawnSpec spec;
  spec.argv = HarnessArgv(options.role == Role::kReference ? "reference" : "candidate");
  spec.env_set = HarnessEnv();
  for (const auto& [k, v] : options.env) spec.env_set[k] = v;
  spec.working_dir = options.scratch_dir;
  spec.stdout_path = options.scratch_dir / "stdout.log";
  spec.stderr_path = options.scratch_dir / "stderr.log";
  spec.sandbox = options.sandbox;
  if (options.role == Role::kCandidate) {
    // Build products of load_inline stay inside the candidate's scratch dir
    // unless the caller points them at a shared cache.
    if (spec.env_set.count("TORCH_EXTENSIONS_DIR") == 0 &&
        std::getenv("TORCH_EXTENSIONS_DIR") == nullptr) {
      spec.env_set["TORCH_EXTENSIONS_DIR"] = (options.scratch_dir / "torch_extensions").string();
    }
  }
  auto child = ChildProcess::Spawn(spec);
  if (!child) return child.error();
  return HarnessProcess(std::move(child).value(), options);
}

HarnessError HarnessProcess::Fail(HarnessFailure f, std::string message) {
  child_.Kill();
  alive_ = false;
  return HarnessError{f, std::move(message)};
}

std::string HarnessProcess::StderrTail(size_t max_bytes) const {
  std::ifstream in(options_.scratch_dir / "stderr.log", std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  std::string s = ss.str();
  if (s.size() > max_bytes) s = s.substr(s.size() - max_bytes);
  return s;
}

std::variant<std::string, HarnessError> HarnessProcess::ReadLineWatched(
    Clock::time_point deadline, Clock::time_point spin_until) {
  for (;;) {
    auto slice = std::min(deadline, Clock::now() + kWatchInterval);
    auto line = child_.ReadLine(slice, spin_until);
    if (line.ok()) return std::move(line).value();
    if (line.error().kind == ErrorKind::kTimeout) {
      if (child_.OverMemoryLimit()) {
        return Fail(HarnessFailure::kMemoryLimit,
                    fmt::format("{} exceeded its memory limit", options_.label));
      }
      if (Clock::now() >= deadline) {
        return Fail(HarnessFailure::kTimeout,
                    fmt::format("{} did not answer within its time limit", options_.label));
      }
      continue;
    }
    // The channel closed: the process died. Say how.
    ExitInfo info = child_.WaitOrKill(Clock::now() + std::chrono::seconds(5));
    alive_ = false;
    std::string last_line = LastLine(StderrTail(kStderrTailForLastLine), kMaxLastLineChars);
    return HarnessError{
        HarnessFailure::kCrashed,
        fmt::format("{} {}{}", options_.label, info.Describe(),
                    last_line.empty() ? "" : " (last stderr line: " + last_line + ")")};
  }
}

std::variant<nlohmann::json, HarnessError> HarnessProcess::Call(const nlohmann::json& command,
                                                                std::chrono::milliseconds timeout) {
  if (auto error = Send(command)) return *error;
  return Receive(timeout);
}

std::optional<HarnessError> HarnessProcess::SendAhead(const nlohmann::json& command,
                                                      std::chrono::milliseconds timeout) {
  if (auto error = Send(command)) return error;
  ahead_timeout_ = timeout;
  return std::nullopt;
}

std::optional<HarnessError> HarnessProcess::CollectAhead() {
  if (!ahead_timeout_) return std::nullopt;
  auto timeout = *ahead_timeout_;
  ahead_timeout_.reset();
  auto reply = Receive(timeout);
  if (auto* e = std::get_if<HarnessError>(&reply)) return *e;
  return std::nullopt;
}

std::optional<HarnessError> HarnessProcess::Send(const nlohmann::json& command) {
  if (auto error = CollectAhead()) return error;
  if (!alive_) return HarnessError{HarnessFailure::kInternal, options_.label + " is not running"};
  if (Status s = child_.SendLine(command.dump()); !s) {
    return Fail(HarnessFailure::kCrashed,
                fmt::format("{} is gone: {}", options_.label, s.error().message));
  }
  return std::nullopt;
}

std::variant<nlohmann::json, HarnessError> HarnessProcess::Receive(
    std::chrono::milliseconds timeout) {
  if (!alive_) return HarnessError{HarnessFailure::kInternal, options_.label + " is not running"};
  auto line = ReadLineWatched(Clock::now() + timeout);
  if (auto* err = std::get_if<HarnessError>(&line)) return *err;
  nlohmann::json reply = nlohmann::json::parse(std::get<std::string>(line), nullptr, false);
  if (reply.is_discarded() || !reply.is_object()) {
    return Fail(HarnessFailure::kInternal,
                fmt::format("{} sent a malformed reply", options_.label));
  }
  if (reply.value("ok", false)) return reply;
  std::string kind = reply.value("kind", "internal");
  std::string message = reply.value("error", "unknown error");
  if (kind == "bad_task") return HarnessError{HarnessFailure::kBadTask, message};
  if (kind == "candidate_error") return HarnessError{HarnessFailure::kCandidateError, message};
  return HarnessError{HarnessFailure::kInternal, message};
}

std::variant<SampleTiming, HarnessError> HarnessProcess::Sample(const std::string& program,
                                                                int calls,
                                                                std::chrono::milliseconds timeout) {
  if (auto error = CollectAhead()) return *error;
  if (!alive_) return HarnessError{HarnessFailure::kInternal, options_.label + " is not running"};
  auto deadline = Clock::now() + timeout;
  if (Status s = child_.SendLine(fmt::format("arm {} {}", program, calls)); !s) {
    return Fail(HarnessFailure::kCrashed, options_.label + " is gone");
  }
  auto armed = ReadLineWatched(deadline);
  if (auto* err = std::get_if<HarnessError>(&armed)) return *err;
  if (std::get<std::string>(armed) != "armed") {
    return HarnessError{HarnessFailure::kCandidateError,
                        fmt::format("{}: arm {} failed: {}", options_.label, program,
                                    std::get<std::string>(armed).substr(0, 300))};
  }
  // The measured interval: from the moment `go` is written until `done`
  // is read. Everything the program started, on any stream, has finished
  // by then because the harness synchronises the whole device first.
  auto t0 = Clock::now();
  if (Status s = child_.SendLine("go"); !s) {
    return Fail(HarnessFailure::kCrashed, options_.label + " is gone");
  }
  auto done = ReadLineWatched(deadline, spin_for_samples_ ? t0 + kDoneSpin : t0);
  auto t1 = Clock::now();
  if (auto* err = std::get_if<HarnessError>(&done)) return *err;
  const std::string& text = std::get<std::string>(done);
  if (text.rfind("done ", 0) != 0) {
    nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
    std::string msg = j.is_object() ? j.value("error", text) : text;
    return HarnessError{HarnessFailure::kCandidateError,
                        fmt::format("{} failed while timed: {}", options_.label, msg)};
  }
  SampleTiming t;
  t.host_ms = std::chrono::duration<double, std::milli>(t1 - t0).count();
  try {
    t.event_ms = std::stod(text.substr(5));
  } catch (...) {
    t.event_ms = -1;
  }
  return t;
}

void HarnessProcess::Stop() {
  if (!alive_) return;
  child_.Resume();  // a frozen process could not read `quit`
  (void)child_.SendLine("quit");
  child_.WaitOrKill(Clock::now() + std::chrono::seconds(5));
  alive_ = false;
}

void HarnessProcess::Kill() {
  if (!alive_) return;
  child_.Kill();
  alive_ = false;
}

std::string LastLine(const std::string& text, size_t max_chars) {
  auto end = text.find_last_not_of("\n\r ");
  if (end == std::string::npos) return "";
  auto cut = text.rfind('\n', end);
  const size_t start = cut == std::string::npos ? 0 : cut + 1;
  std::string line = text.substr(start, end - start + 1);
  if (line.size() > max_chars) line = line.substr(0, max_chars) + " ...";
  return line;
}

}  // namespace kforge
