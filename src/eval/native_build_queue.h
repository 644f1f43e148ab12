// NativeBuildQueue: native (.cu) candidates built ahead of the GPU. A compile
// farm over the evaluator's NativeCompiler and cache; Submit() starts a build
// the moment a candidate exists, and the evaluator's build step (installed as
// EvalOptions::native_build) waits only on the candidate it is about to time.
// So candidates N+1 .. N+k compile while candidate N is measured.
#pragma once

#include <memory>
#include <string>

#include "common/result.h"
#include "compile/compile_farm.h"
#include "compile/native_compiler.h"
#include "eval/evaluator.h"

namespace kforge {

class NativeBuildQueue {
 public:
  // A compiler over `options`' nvcc and cache, `workers` compile processes at
  // once (<= 0: one per hardware thread), builds for `arch` ahead of time.
  // kBadInput when nvcc cannot be run.
  static Result<std::shared_ptr<NativeBuildQueue>> Create(const EvalOptions& options,
                                                          std::string arch, int workers);

  // Starts building `source` for the queue's arch (no wait).
  void Submit(const std::string& source);
  // The build of `request`, waiting for it (started now if it never was).
  compile::NativeBuildResult Get(const compile::NativeBuildRequest& request);
  // An EvalOptions::native_build that goes through this queue.
  std::function<compile::NativeBuildResult(const compile::NativeBuildRequest&)> AsBuildStep();

  const std::string& arch() const { return arch_; }
  int workers() const { return farm_->workers(); }

 private:
  NativeBuildQueue(compile::NativeCompiler compiler, std::string arch, int workers);

  compile::NativeCompiler compiler_;
  std::string arch_;
  std::unique_ptr<compile::CompileFarm> farm_;
};

// The nvcc target of GPU `gpu`, asked of nvidia-smi ("9.0" → sm_90a); the
// documented default sm_90a when it cannot say.
std::string DetectNativeArch(int gpu);

}  // namespace kforge
