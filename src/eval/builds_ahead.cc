#include "eval/builds_ahead.h"

namespace kforge {

std::string BuildsAhead::ArchLocked() {
  // Builds ahead target the first GPU's arch; an evaluation on a GPU of
  // another arch asks for its own build (a different cache key).
  if (arch_.empty()) {
    arch_ = options_.device == "cpu" ? NativeArchFor("") : DetectNativeArch(first_gpu_);
  }
  return arch_;
}

NativeBuildQueue* BuildsAhead::NativeQueue() {
  std::lock_guard lock(mu_);
  if (!native_tried_) {
    native_tried_ = true;
    auto queue = NativeBuildQueue::Create(options_, ArchLocked(), /*workers=*/0);
    if (queue) native_queue_ = *queue;
  }
  return native_queue_.get();
}

ExtensionBuildQueue* BuildsAhead::ExtensionQueue() {
  std::lock_guard lock(mu_);
  if (!extension_tried_) {
    extension_tried_ = true;
    if (options_.device == "cpu" || !options_.prebuild_extensions) return nullptr;
    auto queue =
        ExtensionBuildQueue::Create(options_, TorchArchListFor(ArchLocked()), /*workers=*/0);
    if (queue) extension_queue_ = *queue;
  }
  return extension_queue_.get();
}

void BuildsAhead::Warm() {
  NativeQueue();
  ExtensionQueue();
}

void BuildsAhead::Prepare(const std::string& source, bool native) {
  if (native) {
    if (NativeBuildQueue* queue = NativeQueue()) queue->Submit(source);
  } else if (ExtensionBuildQueue* queue = ExtensionQueue()) {
    queue->Submit(source);
  }
}

void BuildsAhead::Apply(EvalOptions& options, bool native) {
  if (native) {
    if (NativeBuildQueue* queue = NativeQueue()) options.native_build = queue->AsBuildStep();
  } else if (ExtensionBuildQueue* queue = ExtensionQueue()) {
    options.extension_build = queue->AsBuildStep();
  }
}

Result<std::filesystem::path> BuildsAhead::BuildNativeLibrary(const std::string& source) {
  compile::NativeBuildRequest request;
  request.source = source;
  {
    std::lock_guard lock(mu_);
    request.arch = ArchLocked();
  }
  compile::NativeBuildResult built;
  if (NativeBuildQueue* queue = NativeQueue()) {
    built = queue->AsBuildStep()(request);
  } else {
    auto direct = BuildNativeDefault(options_, request);
    if (!direct) return direct.error();
    built = std::move(direct).value();
  }
  if (!built.ok) return Error::BadInput("the native candidate does not build: " + built.error);
  return built.library;
}

}  // namespace kforge
