#include "eval/native_build_queue.h"

#include <fmt/format.h>

#include "common/subprocess.h"

namespace kforge {

NativeBuildQueue::NativeBuildQueue(compile::NativeCompiler compiler, std::string arch, int workers)
    : compiler_(std::move(compiler)), arch_(std::move(arch)) {
  // The farm's workers call into compiler_, which outlives them (farm_ is
  // destroyed first: it is declared last).
  farm_ = std::make_unique<compile::CompileFarm>(
      [this](const compile::NativeBuildRequest& r) { return compiler_.Build(r); }, workers);
}

Result<std::shared_ptr<NativeBuildQueue>> NativeBuildQueue::Create(const EvalOptions& options,
                                                                   std::string arch, int workers) {
  auto compiler = NativeCompilerFor(options);
  if (!compiler) return compiler.error();
  return std::shared_ptr<NativeBuildQueue>(
      new NativeBuildQueue(std::move(compiler).value(), std::move(arch), workers));
}

void NativeBuildQueue::Submit(const std::string& source) {
  compile::NativeBuildRequest request;
  request.source = source;
  request.arch = arch_;
  farm_->Submit(compiler_.KeyFor(request), std::move(request));
}

compile::NativeBuildResult NativeBuildQueue::Get(const compile::NativeBuildRequest& request) {
  // A build still queued or running is joined; a finished one is asked for
  // again and answered by the cache.
  return farm_->Submit(compiler_.KeyFor(request), request).get();
}

std::function<compile::NativeBuildResult(const compile::NativeBuildRequest&)>
NativeBuildQueue::AsBuildStep() {
  return [this](const compile::NativeBuildRequest& r) { return Get(r); };
}

std::string DetectNativeArch(int gpu) {
  SpawnSpec spec;
  spec.argv = {"nvidia-smi", "--query-gpu=compute_cap", "--format=csv,noheader", "-i",
               std::to_string(gpu)};
  auto out = RunCommand(spec, std::chrono::seconds(30));
  if (!out || !out->exit.exited || out->exit.exit_code != 0) return NativeArchFor("");
  std::string cap = out->stdout_text;
  while (!cap.empty() && (cap.back() == '\n' || cap.back() == ' ' || cap.back() == '\r')) {
    cap.pop_back();
  }
  return NativeArchFor(cap);
}

}  // namespace kforge
