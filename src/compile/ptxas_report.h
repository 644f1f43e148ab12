// Resource usage per kernel, from ptxas's verbose output (nvcc -Xptxas -v):
// registers, spills, stack, shared and constant memory. It goes into the eval
// JSON and the prompts, so a model can see that its kernel spills.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace kforge::compile {

struct KernelResources {
  std::string name;  // mangled entry name
  std::string arch;  // e.g. sm_90a
  int64_t registers = 0;
  int64_t barriers = 0;
  int64_t shared_bytes = 0;    // static shared memory ("smem")
  int64_t constant_bytes = 0;  // cmem[0]
  int64_t stack_frame_bytes = 0;
  int64_t spill_store_bytes = 0;
  int64_t spill_load_bytes = 0;

  nlohmann::json ToJson() const;
};

// Entry functions found in the log, in the order ptxas reports them. Lines it
// does not know are skipped; a log without ptxas lines gives an empty list.
std::vector<KernelResources> ParsePtxasLog(std::string_view log);

}  // namespace kforge::compile
