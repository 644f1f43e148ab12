// The device as the harness processes name it (`python -m
// kforge_harness.device`): the GPU or CPU name and the PyTorch version that
// key baselines. Asked once, before any task runs, so that `kforge baseline`
// can tell which tasks it has already measured on this device.
#pragma once

#include <string>

#include "common/result.h"

namespace kforge {

struct DeviceIdentity {
  std::string kind;  // cuda | cpu (auto resolved as the harness resolves it)
  std::string name;  // "NVIDIA H100 80GB HBM3", or the CPU model
  std::string torch_version;
  int index = 0;
};

// kBadInput when the device asked for is not there (cuda without a GPU, an
// index out of range); kInternal when Python or PyTorch cannot start.
Result<DeviceIdentity> ProbeHarnessDevice(const std::string& kind, int index);

}  // namespace kforge
