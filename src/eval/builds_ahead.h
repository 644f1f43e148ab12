// BuildsAhead: the compile farm of a process that evaluates many candidates
// (optimize's evaluation backend, `kforge serve`): native objects through a
// NativeBuildQueue and, on cuda, KernelBench candidates' extensions through an
// ExtensionBuildQueue, each queue made on first use for the first GPU's arch.
// Prepare() starts a candidate's build as soon as the candidate is known;
// Apply() points an evaluation's options at the queues, so the evaluation
// finds its build done, or waits for the one under way. Thread-safe.
#pragma once

#include <filesystem>
#include <memory>
#include <mutex>
#include <string>

#include "common/result.h"
#include "eval/evaluator.h"
#include "eval/extension_build_queue.h"
#include "eval/native_build_queue.h"

namespace kforge {

class BuildsAhead {
 public:
  // `options.device` resolved (cuda or cpu); `first_gpu` names the arch.
  BuildsAhead(EvalOptions options, int first_gpu)
      : options_(std::move(options)), first_gpu_(first_gpu) {}

  // Starts building `source` (no wait). A KernelBench candidate is built
  // ahead on cuda only (on a cpu its C++ is built by its own evaluation).
  void Prepare(const std::string& source, bool native);
  // Makes both queues now (probing nvcc and Python with torch takes
  // seconds), so that a later Prepare() returns at once.
  void Warm();
  // Sets options.native_build or options.extension_build to the queue's
  // build step; leaves them empty when the queue cannot run (nvcc or torch
  // missing: each evaluation then builds on its own and says why it cannot).
  void Apply(EvalOptions& options, bool native);
  // A native candidate's object for the first GPU's arch (a cache hit once
  // it was evaluated). kBadInput when it does not build.
  Result<std::filesystem::path> BuildNativeLibrary(const std::string& source);

 private:
  NativeBuildQueue* NativeQueue();
  ExtensionBuildQueue* ExtensionQueue();
  std::string ArchLocked();  // with mu_ held

  EvalOptions options_;
  int first_gpu_ = 0;
  std::mutex mu_;
  std::string arch_;
  bool native_tried_ = false, extension_tried_ = false;
  std::shared_ptr<NativeBuildQueue> native_queue_;
  std::shared_ptr<ExtensionBuildQueue> extension_queue_;
};

}  // namespace kforge
