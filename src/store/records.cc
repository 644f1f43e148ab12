#include "store/records.h"

#include <fmt/format.h>
#include <time.h>

#include <array>
#include <chrono>
#include <random>

namespace kforge {

namespace {

template <class E, size_t N>
Result<E> ParseName(std::string_view name, const std::array<std::string_view, N>& names,
                    const char* what) {
  for (size_t i = 0; i < N; ++i) {
    if (names[i] == name) return static_cast<E>(i);
  }
  return Error::BadInput(fmt::format("unknown {} '{}'", what, name));
}

constexpr std::array<std::string_view, 5> kRunStatusNames = {"created", "running", "completed",
                                                             "stopped", "failed"};
constexpr std::array<std::string_view, 3> kIdeaStatusNames = {"active", "pruned", "rejected"};
constexpr std::array<std::string_view, 3> kJobStateNames = {"pending", "leased", "done"};

struct UtcParts {
  tm fields;
  int64_t micros;
};

UtcParts Split(std::chrono::system_clock::time_point t) {
  auto micros = std::chrono::duration_cast<std::chrono::microseconds>(t.time_since_epoch());
  time_t secs = static_cast<time_t>(micros.count() / 1000000);
  UtcParts parts{};
  gmtime_r(&secs, &parts.fields);
  parts.micros = micros.count() % 1000000;
  return parts;
}

}  // namespace

std::string_view RunStatusName(RunStatus status) {
  return kRunStatusNames[static_cast<size_t>(status)];
}
Result<RunStatus> ParseRunStatus(std::string_view name) {
  return ParseName<RunStatus>(name, kRunStatusNames, "run status");
}

std::string_view IdeaStatusName(IdeaStatus status) {
  return kIdeaStatusNames[static_cast<size_t>(status)];
}
Result<IdeaStatus> ParseIdeaStatus(std::string_view name) {
  return ParseName<IdeaStatus>(name, kIdeaStatusNames, "idea status");
}

std::string_view JobStateName(JobState state) {
  return kJobStateNames[static_cast<size_t>(state)];
}
Result<JobState> ParseJobState(std::string_view name) {
  return ParseName<JobState>(name, kJobStateNames, "job state");
}

std::string IsoUtcNow() {
  return IsoUtc(std::chrono::system_clock::now());
}

std::string IsoUtc(std::chrono::system_clock::time_point t) {
  UtcParts p = Split(t);
  return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:06}Z", p.fields.tm_year + 1900,
                     p.fields.tm_mon + 1, p.fields.tm_mday, p.fields.tm_hour, p.fields.tm_min,
                     p.fields.tm_sec, p.micros);
}

std::string RandomHexId() {
  std::random_device rd;
  uint64_t v = (static_cast<uint64_t>(rd()) << 32) | rd();
  return fmt::format("{:016x}", v);
}

std::string NewRunId() {
  UtcParts p = Split(std::chrono::system_clock::now());
  return fmt::format("{:04}{:02}{:02}-{:02}{:02}{:02}-{}", p.fields.tm_year + 1900,
                     p.fields.tm_mon + 1, p.fields.tm_mday, p.fields.tm_hour, p.fields.tm_min,
                     p.fields.tm_sec, RandomHexId().substr(0, 6));
}

std::string NewBenchId() {
  return "bench-" + NewRunId();
}

}  // namespace kforge
