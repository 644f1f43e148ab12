// NativeCompiler: a native candidate (.cu with the kforge ABI, no PyTorch
// headers) to a shared object with nvcc, through the CompileCache. A build
// takes seconds where a load_inline build takes most of a minute, because no
// PyTorch header is parsed. ptxas's resource report (registers, spills,
// shared memory) is kept with the build.
#pragma once

#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

#include "common/result.h"
#include "compile/compile_cache.h"
#include "compile/ptxas_report.h"

namespace kforge::compile {

// The ABI header (compile/abi/kforge_native.h), embedded in the binary.
std::string_view NativeAbiHeader();
inline constexpr int kNativeAbiVersion = 1;

struct NativeBuildRequest {
  std::string source;
  std::string arch = "sm_90a";  // Hopper: sm_90a unlocks wgmma/TMA (device tool HOPPER.md)
  std::vector<std::string> extra_flags;
};

struct NativeBuildResult {
  bool ok = false;
  bool cache_hit = false;
  std::string key;
  std::filesystem::path library;  // kernel.so, when ok
  std::string log;                // nvcc's output (errors, ptxas report)
  std::vector<KernelResources> resources;
  double seconds = 0;  // compile time (0 on a hit)
  std::string error;   // why it failed, one line
};

class NativeCompiler {
 public:
  static constexpr std::chrono::seconds kDefaultTimeout{300};

  // nvcc: a path or a name on PATH. kBadInput when it cannot be run.
  static Result<NativeCompiler> Create(const std::string& nvcc, CompileCache cache,
                                       std::chrono::seconds timeout = kDefaultTimeout);

  // The flags every build uses for `arch` (they are part of the cache key).
  static std::vector<std::string> Flags(const std::string& arch);
  std::string KeyFor(const NativeBuildRequest& request) const;

  // Thread-safe; a failed build is a result with ok = false, not an error.
  NativeBuildResult Build(const NativeBuildRequest& request) const;

  const std::string& compiler_version() const { return compiler_version_; }
  const CompileCache& cache() const { return cache_; }

 private:
  NativeCompiler(std::string nvcc, std::string version, CompileCache cache,
                 std::chrono::seconds timeout)
      : nvcc_(std::move(nvcc)),
        compiler_version_(std::move(version)),
        cache_(std::move(cache)),
        timeout_(timeout) {}

  std::string nvcc_;
  std::string compiler_version_;
  CompileCache cache_;
  std::chrono::seconds timeout_;
};

}  // namespace kforge::compile
