#include "llm/call_log.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <ctime>
#include <fstream>
#include <random>

namespace kforge::llm {

using nlohmann::json;

nlohmann::json CallRecordToJson(const LlmCallRecord& r) {
  return {{"id", r.id},
          {"run_id", r.run_id},
          {"seq", r.seq},
          {"stage", r.stage},
          {"model_spec", r.model_spec},
          {"request_hash", r.request_hash},
          {"request_json", r.request_json},
          {"response_json", r.response_json},
          {"text", r.text},
          {"input_tokens", r.input_tokens},
          {"output_tokens", r.output_tokens},
          {"latency_ms", r.latency_ms},
          {"cost_usd", r.cost_usd},
          {"status", r.status},
          {"error", r.error},
          {"created_at", r.created_at}};
}

Result<LlmCallRecord> CallRecordFromJson(const nlohmann::json& j) {
  try {
    LlmCallRecord r;
    r.id = j.value("id", "");
    r.run_id = j.at("run_id").get<std::string>();
    r.seq = j.at("seq").get<int64_t>();
    r.stage = j.value("stage", "");
    r.model_spec = j.value("model_spec", "");
    r.request_hash = j.value("request_hash", "");
    r.request_json = j.value("request_json", "");
    r.response_json = j.value("response_json", "");
    r.text = j.value("text", "");
    r.input_tokens = j.value("input_tokens", int64_t{0});
    r.output_tokens = j.value("output_tokens", int64_t{0});
    r.latency_ms = j.value("latency_ms", 0.0);
    r.cost_usd = j.value("cost_usd", 0.0);
    r.status = j.at("status").get<std::string>();
    r.error = j.value("error", "");
    r.created_at = j.value("created_at", "");
    return r;
  } catch (const json::exception& e) {
    return Error::BadInput(fmt::format("LLM call record not understood: {}", e.what()));
  }
}

Status MemoryCallLog::Record(const LlmCallRecord& record) {
  std::lock_guard<std::mutex> lock(mu_);
  runs_[record.run_id].push_back(record);
  return {};
}

Result<std::vector<LlmCallRecord>> MemoryCallLog::LoadRun(const std::string& run_id) {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<LlmCallRecord> out;
  if (auto it = runs_.find(run_id); it != runs_.end()) out = it->second;
  std::stable_sort(out.begin(), out.end(),
                   [](const auto& a, const auto& b) { return a.seq < b.seq; });
  return out;
}

namespace {

// A crash mid-write leaves a last line without its newline; appending after
// it would glue the next record onto it. Cut the file back to its last
// complete line before the first append.
Status DropCutTail(int fd) {
  off_t size = ::lseek(fd, 0, SEEK_END);
  if (size <= 0) return {};
  char buf[4096];
  off_t end = size;
  while (end > 0) {
    off_t start = end > static_cast<off_t>(sizeof(buf)) ? end - static_cast<off_t>(sizeof(buf)) : 0;
    ssize_t n = ::pread(fd, buf, static_cast<size_t>(end - start), start);
    if (n < 0) return Error::Io(std::strerror(errno));
    for (ssize_t i = n - 1; i >= 0; --i) {
      if (buf[i] == '\n') {
        off_t keep = start + i + 1;
        if (keep == size) return {};
        if (::ftruncate(fd, keep) != 0) return Error::Io(std::strerror(errno));
        return {};
      }
    }
    end = start;
  }
  if (::ftruncate(fd, 0) != 0) return Error::Io(std::strerror(errno));
  return {};
}

}  // namespace

JsonlCallLog::JsonlCallLog(std::filesystem::path path) : path_(std::move(path)) {}

JsonlCallLog::~JsonlCallLog() {
  if (fd_ >= 0) ::close(fd_);
}

Status JsonlCallLog::Record(const LlmCallRecord& record) {
  // Invalid UTF-8 in a prompt must not make recording throw.
  std::string line =
      CallRecordToJson(record).dump(-1, ' ', false, json::error_handler_t::replace) + "\n";
  std::lock_guard<std::mutex> lock(mu_);
  if (fd_ < 0) {
    std::error_code ec;
    if (path_.has_parent_path()) std::filesystem::create_directories(path_.parent_path(), ec);
    fd_ = ::open(path_.c_str(), O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
    if (fd_ < 0) {
      return Error::Io(
          fmt::format("cannot open LLM call log {}: {}", path_.string(), std::strerror(errno)));
    }
    if (Status s = DropCutTail(fd_); !s) {
      ::close(fd_);
      fd_ = -1;
      return Error::Io(fmt::format("LLM call log {}: {}", path_.string(), s.error().message));
    }
  }
  // O_APPEND makes each write land at the end even with other writers; one
  // write per record keeps lines whole.
  size_t done = 0;
  while (done < line.size()) {
    ssize_t n = ::write(fd_, line.data() + done, line.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      return Error::Io(
          fmt::format("cannot write LLM call log {}: {}", path_.string(), std::strerror(errno)));
    }
    done += static_cast<size_t>(n);
  }
  if (::fsync(fd_) != 0) {
    return Error::Io(
        fmt::format("cannot sync LLM call log {}: {}", path_.string(), std::strerror(errno)));
  }
  return {};
}

Result<std::vector<LlmCallRecord>> JsonlCallLog::LoadRun(const std::string& run_id) {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<LlmCallRecord> out;
  std::ifstream in(path_);
  if (!in) {
    if (!std::filesystem::exists(path_)) return out;
    return Error::Io(fmt::format("cannot read LLM call log {}", path_.string()));
  }
  std::string contents((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  size_t pos = 0;
  int line_no = 0;
  while (pos < contents.size()) {
    size_t end = contents.find('\n', pos);
    bool last = end == std::string::npos;
    std::string_view line(contents.data() + pos, (last ? contents.size() : end) - pos);
    pos = last ? contents.size() : end + 1;
    ++line_no;
    if (line.empty()) continue;
    json j = json::parse(line, nullptr, false);
    if (j.is_discarded() || !j.is_object()) {
      if (last) break;  // the tail of a write cut by a crash
      return Error::Io(fmt::format("LLM call log {} line {} is damaged", path_.string(), line_no));
    }
    if (j.value("run_id", "") != run_id) continue;
    auto record = CallRecordFromJson(j);
    if (!record) {
      return Error::Io(fmt::format("LLM call log {} line {}: {}", path_.string(), line_no,
                                   record.error().message));
    }
    out.push_back(std::move(record).value());
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const auto& a, const auto& b) { return a.seq < b.seq; });
  return out;
}

std::string NewCallId() {
  static thread_local std::mt19937_64 rng{std::random_device{}()};
  return fmt::format("{:016x}", rng());
}

std::string IsoUtcTimestamp() {
  auto now = std::chrono::system_clock::now();
  auto us = std::chrono::duration_cast<std::chrono::microseconds>(now.time_since_epoch()).count();
  std::time_t secs = static_cast<std::time_t>(us / 1000000);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:06}Z", tm.tm_year + 1900, tm.tm_mon + 1,
                     tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, us % 1000000);
}

}  // namespace kforge::llm
