#include "eval/cpu_placement.h"

#include <pthread.h>
#include <sched.h>

#include <fstream>
#include <iterator>
#include <vector>

namespace kforge {
namespace {

std::set<int> FromMask(const cpu_set_t& mask) {
  std::set<int> cpus;
  for (int c = 0; c < CPU_SETSIZE; ++c) {
    if (CPU_ISSET(c, &mask)) cpus.insert(c);
  }
  return cpus;
}

cpu_set_t ToMask(const std::set<int>& cpus) {
  cpu_set_t mask;
  CPU_ZERO(&mask);
  for (int c : cpus) {
    if (c >= 0 && c < CPU_SETSIZE) CPU_SET(c, &mask);
  }
  return mask;
}

bool BindCallingThread(const std::set<int>& cpus) {
  cpu_set_t mask = ToMask(cpus);
  return ::pthread_setaffinity_np(::pthread_self(), sizeof(mask), &mask) == 0;
}

// The highest CPU of `pool` that is not in `avoid` and not CPU 0, else CPU 0
// if allowed; -1 when none.
int Pick(const std::set<int>& pool, const std::set<int>& avoid) {
  for (auto it = pool.rbegin(); it != pool.rend(); ++it) {
    if (*it != 0 && !avoid.contains(*it)) return *it;
  }
  return pool.contains(0) && !avoid.contains(0) ? 0 : -1;
}

}  // namespace

std::optional<std::set<int>> ParseCpuList(const std::string& text) {
  std::set<int> cpus;
  size_t pos = 0;
  std::string body = text;
  while (!body.empty() && (body.back() == '\n' || body.back() == ' ')) body.pop_back();
  if (body.empty()) return std::nullopt;
  while (pos <= body.size()) {
    size_t comma = body.find(',', pos);
    std::string part =
        body.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    size_t dash = part.find('-');
    try {
      size_t used = 0;
      int lo = std::stoi(part.substr(0, dash), &used);
      if (used != (dash == std::string::npos ? part.size() : dash) || lo < 0) return std::nullopt;
      int hi = lo;
      if (dash != std::string::npos) {
        std::string tail = part.substr(dash + 1);
        hi = std::stoi(tail, &used);
        if (used != tail.size() || hi < lo) return std::nullopt;
      }
      for (int c = lo; c <= hi; ++c) cpus.insert(c);
    } catch (const std::exception&) {
      return std::nullopt;
    }
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  return cpus;
}

std::optional<std::set<int>> ReadGpuLocalCpus(const std::filesystem::path& sysfs_root,
                                              const std::string& slot) {
  if (slot.empty()) return std::nullopt;
  std::ifstream in(sysfs_root / "bus" / "pci" / "devices" / slot / "local_cpulist");
  if (!in) return std::nullopt;
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return ParseCpuList(text);
}

std::set<int> AllowedCpus() {
  cpu_set_t mask;
  CPU_ZERO(&mask);
  if (::sched_getaffinity(0, sizeof(mask), &mask) != 0) return {};
  return FromMask(mask);
}

Result<CpuPlacement> PlanCpuPlacement(const std::set<int>& allowed,
                                      const std::set<int>& gpu_local) {
  if (allowed.size() < 2) {
    return Error::NotFound("fewer than two CPUs to run on: nothing to separate");
  }
  std::set<int> local;
  for (int c : gpu_local) {
    if (allowed.contains(c)) local.insert(c);
  }
  const std::set<int>& first_pool = local.empty() ? allowed : local;
  CpuPlacement p;
  p.harness_cpu = Pick(first_pool, {});
  // The timer's core matters less than the harness's: a local one if there
  // is another, else any other allowed CPU.
  p.timer_cpu = Pick(first_pool, {p.harness_cpu});
  if (p.timer_cpu < 0) p.timer_cpu = Pick(allowed, {p.harness_cpu});
  return p;
}

ThreadCpuBinding::ThreadCpuBinding(int cpu) {
  cpu_set_t mask;
  CPU_ZERO(&mask);
  if (::pthread_getaffinity_np(::pthread_self(), sizeof(mask), &mask) != 0) return;
  previous_ = FromMask(mask);
  ok_ = BindCallingThread({cpu});
}

ThreadCpuBinding::~ThreadCpuBinding() {
  if (ok_) BindCallingThread(previous_);
}

}  // namespace kforge
