#include "eval/cpu_placement.h"

#include <pthread.h>
#include <sched.h>

#include <algorithm>
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

// `pool` highest first, so CPU 0 (where interrupts and housekeeping land
// first) comes last.
std::vector<int> PreferenceOrder(const std::set<int>& pool) {
  return std::vector<int>(pool.rbegin(), pool.rend());
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

Result<CpuPlacement> PlanCpuPlacement(const std::set<int>& allowed, const std::set<int>& gpu_local,
                                      int gpu_index) {
  if (allowed.size() < 2) {
    return Error::NotFound("fewer than two CPUs to run on: nothing to separate");
  }
  std::set<int> local;
  for (int c : gpu_local) {
    if (allowed.contains(c)) local.insert(c);
  }
  std::vector<int> order = PreferenceOrder(local.empty() ? allowed : local);
  CpuPlacement p;
  if (order.size() >= 2) {
    // Each GPU of the host its own pair while there are CPUs enough, so that
    // windows on several GPUs at once do not share a CPU.
    const size_t slot = 2 * static_cast<size_t>(std::max(gpu_index, 0));
    p.harness_cpu = order[slot % order.size()];
    p.timer_cpu = order[(slot + 1) % order.size()];
    return p;
  }
  // One local CPU: the timer, which matters less, goes anywhere else.
  p.harness_cpu = order.front();
  for (int c : PreferenceOrder(allowed)) {
    if (c != p.harness_cpu) {
      p.timer_cpu = c;
      break;
    }
  }
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
