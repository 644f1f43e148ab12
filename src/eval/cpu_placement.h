// Where the timed processes run on the host during a GPU timing window.
//
// A short kernel's host-synchronised time includes its launch and the
// synchronisation, a few microseconds of CPU work that depend on the core
// doing it. On a VM the guest's CPUs are host threads whose neighbours the
// guest cannot see, and the scheduler gives each process its own core for
// life: two processes timing the same 70 µs kernel differed by up to 4%
// from run to run on an H100 (issue 2, L1 12). So, for the window, both
// harness processes share one CPU (they never run at once: batches
// alternate) and kforge's timer, which spins while it waits, takes another.
#pragma once

#include <filesystem>
#include <optional>
#include <set>
#include <string>

#include "common/result.h"

namespace kforge {

struct CpuPlacement {
  int harness_cpu = -1;  // both harness processes, for the timing window
  int timer_cpu = -1;    // kforge's thread that spans each sample
};

// "0-3,8,10-11" → {0,1,2,3,8,10,11} (the sysfs cpulist format). nullopt on
// anything else.
std::optional<std::set<int>> ParseCpuList(const std::string& text);

// The CPUs the PCI device `slot` ("0000:00:06.0") reports as local, read
// under `sysfs_root` (normally /sys). nullopt where the file is missing or
// unreadable.
std::optional<std::set<int>> ReadGpuLocalCpus(const std::filesystem::path& sysfs_root,
                                              const std::string& slot);

// The CPUs this process may run on (its affinity mask).
std::set<int> AllowedCpus();

// Chooses the two CPUs among `allowed` for the window of GPU `gpu_index`,
// preferring the GPU's local ones, highest first and CPU 0 last (interrupts
// and housekeeping land there first). GPU k takes the (2k+1)-th and (2k+2)-th
// of that order, so that windows on several GPUs at once keep apart while
// there are CPUs enough. An error says why no placement is possible (fewer
// than two CPUs).
Result<CpuPlacement> PlanCpuPlacement(const std::set<int>& allowed, const std::set<int>& gpu_local,
                                      int gpu_index);

// Binds the calling thread to one CPU for its lifetime and restores the
// previous mask after. `ok()` is false where the kernel refused.
class ThreadCpuBinding {
 public:
  explicit ThreadCpuBinding(int cpu);
  ~ThreadCpuBinding();
  ThreadCpuBinding(const ThreadCpuBinding&) = delete;
  ThreadCpuBinding& operator=(const ThreadCpuBinding&) = delete;
  bool ok() const { return ok_; }

 private:
  bool ok_ = false;
  std::set<int> previous_;
};

}  // namespace kforge
