// ExtensionBuildQueue: KernelBench candidates' load_inline extensions built
// ahead of the GPU, as NativeBuildQueue does for native candidates. A build
// imports the candidate in a sandboxed harness process (python -m
// kforge_harness.prebuild) with no GPU visible, TORCH_EXTENSIONS_DIR set to
// the candidate's entry of a content-addressed cache (source, torch version,
// CUDA arch list) and TORCH_CUDA_ARCH_LIST fixed; the evaluation's candidate
// process gets the same two variables and finds the build up to date.
// Entries are capped in size, least recently used out first (CompileCache).
#pragma once

#include <filesystem>
#include <functional>
#include <memory>
#include <string>

#include "common/result.h"
#include "compile/compile_cache.h"
#include "compile/compile_farm.h"
#include "eval/evaluator.h"

namespace kforge {

class ExtensionBuildQueue {
 public:
  // `arch_list`: TORCH_CUDA_ARCH_LIST for every build ("9.0"); `workers`
  // builds at once (<= 0: one per two hardware threads, each build's ninja
  // getting the rest). kBadInput when Python with torch cannot be run.
  static Result<std::shared_ptr<ExtensionBuildQueue>> Create(const EvalOptions& options,
                                                             std::string arch_list, int workers);

  // Starts building `source` (no wait).
  void Submit(const std::string& source);
  // The build of `source`, waiting for it (started now if it never was).
  ExtensionPrebuild Get(const std::string& source);
  // An EvalOptions::extension_build that goes through this queue.
  std::function<ExtensionPrebuild(const Candidate&)> AsBuildStep();

  // The cache key of a source under this queue's torch version and arch list.
  std::string KeyFor(const std::string& source) const;

 private:
  struct Request {
    std::string source;
  };
  ExtensionBuildQueue(compile::CompileCache cache, const EvalOptions& options,
                      std::string torch_version, std::string arch_list, int workers);
  ExtensionPrebuild Build(const Request& request) const;

  compile::CompileCache cache_;
  uint64_t memory_limit_bytes_;
  double timeout_s_;
  bool isolate_network_;
  std::string torch_version_;
  std::string arch_list_;
  int ninja_jobs_ = 1;
  std::unique_ptr<compile::BuildFarm<Request, ExtensionPrebuild>> farm_;  // last: joined first
};

// TORCH_CUDA_ARCH_LIST for an nvcc target ("sm_90a" → "9.0a", "sm_86" → "8.6").
std::string TorchArchListFor(const std::string& native_arch);

}  // namespace kforge
