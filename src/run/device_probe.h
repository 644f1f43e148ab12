// Which device a run evaluates on, and how to describe it to the model.
// `auto` is resolved once, when the run starts, by asking PyTorch (the
// harness would resolve it the same way), and the resolved kind is recorded
// with the run so that a resumed run keeps it.
#pragma once

#include <string>
#include <vector>

#include "common/result.h"

namespace kforge::run {

struct DeviceInfo {
  std::string kind;      // cuda | cpu
  std::string hardware;  // for prompts: "NVIDIA H100 80GB HBM3" / "x86_64 CPU: <model>, 16 cores"
  int visible_gpus = 0;  // cuda: GPUs PyTorch sees
};

// kBadInput for an unknown kind, or cuda asked for and not available.
Result<DeviceInfo> ProbeDevice(const std::string& requested, int gpu);
// The CPU's model name and core count.
std::string CpuDescription();

}  // namespace kforge::run
