// The profile step (KernelBlaster §3): one forward pass of a task's reference
// or of a candidate under Nsight Compute, parsed into per-kernel profiles and
// a performance state. The program runs in its own sandboxed child
// (`python3 -m kforge_harness.profile` under ncu), which holds no reference
// output and no timer; kforge only reads ncu's report.
#pragma once

#include <chrono>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "common/result.h"
#include "kb/performance_state.h"

namespace kforge::kb {

struct ProfileRequest {
  std::filesystem::path task;
  std::optional<std::filesystem::path> candidate;  // none: the task's own Model
  // A native candidate's built object (kernel.so): profiled through the C ABI
  // with the reference's weights, instead of a KernelBench `candidate`.
  std::optional<std::filesystem::path> native_library;
  int gpu = 0;
  std::string dtype;  // empty: the task's own
  uint64_t seed = 42;
  std::filesystem::path work_dir;  // report files go here
  std::string ncu = "ncu";
  std::chrono::seconds timeout{600};
};

struct ProgramProfile {
  std::vector<KernelProfile> kernels;
  StateClassification state;
  std::string raw_csv;  // ncu's raw page, for the store and for re-parsing
};

// Runs ncu (`--clock-control none`, KernelBlaster's sections) on the program
// and parses its raw page. A program that profiles no kernel (a CPU-only
// forward) is kBadInput; ncu missing or failing is kIo with its log's tail.
Result<ProgramProfile> ProfileProgram(const ProfileRequest& request);

// The argv of the two ncu runs, exposed for tests and docs.
std::vector<std::string> NcuProfileArgv(const ProfileRequest& request,
                                        const std::filesystem::path& report);
std::vector<std::string> NcuExportArgv(const ProfileRequest& request,
                                       const std::filesystem::path& report);

nlohmann::json ToJson(const KernelProfile& k);
nlohmann::json ToJson(const StateClassification& s);

}  // namespace kforge::kb
