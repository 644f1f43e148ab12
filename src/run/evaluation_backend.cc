#include "run/evaluation_backend.h"

#include <fmt/format.h>

#include <exception>

#include "candidate/candidate.h"
#include "common/files.h"

namespace kforge::run {

EvaluatorBackend::EvaluatorBackend(Task task, EvalOptions options, std::vector<int> gpus,
                                   std::filesystem::path scratch_dir)
    : task_(std::move(task)),
      options_(std::move(options)),
      gpus_(std::move(gpus)),
      scratch_dir_(std::move(scratch_dir)) {
  if (options_.device == "cpu" || gpus_.empty()) gpus_ = {options_.gpu};
  for (size_t w = 0; w < gpus_.size(); ++w) {
    sessions_.push_back(std::make_unique<EvaluationSession>(
        scratch_dir_ / fmt::format("reference-{}", w), options_.reuse_reference));
  }
}

std::string EvaluatorBackend::Describe() const {
  if (options_.device == "cpu") return "cpu";
  std::string out = options_.device + ":";
  for (size_t i = 0; i < gpus_.size(); ++i) out += (i ? "," : "") + std::to_string(gpus_[i]);
  return out;
}

Result<nlohmann::json> EvaluatorBackend::Evaluate(int worker, const EvaluationRequest& request) {
  if (worker < 0 || worker >= workers()) {
    return Error::Internal(fmt::format("no evaluation worker {}", worker));
  }
  Candidate candidate;
  candidate.path = scratch_dir_ / (request.candidate_id + (request.native ? ".cu" : ".py"));
  candidate.source = request.source;
  candidate.sha256 = request.sha256;
  candidate.format = request.native             ? CandidateFormat::kNative
                     : options_.device == "cpu" ? CandidateFormat::kCpp
                                                : CandidateFormat::kKernelBench;
  if (Status st = WriteFileAtomic(candidate.path, candidate.source); !st) return st.error();

  EvalOptions options = options_;
  options.gpu = gpus_[static_cast<size_t>(worker)];
  options.depth = request.depth;
  if (request.native) {
    if (NativeBuildQueue* queue = NativeQueue()) options.native_build = queue->AsBuildStep();
  } else if (ExtensionBuildQueue* queue = ExtensionQueue()) {
    options.extension_build = queue->AsBuildStep();
  }
  try {
    Evaluator evaluator(options);
    EvalResult result =
        evaluator.Evaluate(task_, candidate, sessions_[static_cast<size_t>(worker)].get());
    return result.ToJson();
  } catch (const OperationError& e) {
    return e.error;
  } catch (const std::exception& e) {
    return Error::Internal(
        fmt::format("evaluation of candidate {} failed: {}", request.candidate_id, e.what()));
  }
}

void EvaluatorBackend::Prepare(const EvaluationRequest& request) {
  if (request.native) {
    if (NativeBuildQueue* queue = NativeQueue()) queue->Submit(request.source);
  } else if (ExtensionBuildQueue* queue = ExtensionQueue()) {
    queue->Submit(request.source);
  }
}

Result<std::filesystem::path> EvaluatorBackend::BuildNativeLibrary(const std::string& source) {
  compile::NativeBuildRequest request;
  request.source = source;
  request.arch = Arch();
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

std::string EvaluatorBackend::Arch() {
  // Builds ahead target the first GPU's arch; an evaluation on a GPU of
  // another arch asks for its own build (a different cache key).
  if (arch_.empty()) {
    arch_ = options_.device == "cpu" ? NativeArchFor("") : DetectNativeArch(gpus_[0]);
  }
  return arch_;
}

NativeBuildQueue* EvaluatorBackend::NativeQueue() {
  std::lock_guard lock(queues_mu_);
  if (!native_tried_) {
    native_tried_ = true;
    auto queue = NativeBuildQueue::Create(options_, Arch(), /*workers=*/0);
    if (queue) native_queue_ = *queue;
  }
  return native_queue_.get();
}

ExtensionBuildQueue* EvaluatorBackend::ExtensionQueue() {
  std::lock_guard lock(queues_mu_);
  if (!extension_tried_) {
    extension_tried_ = true;
    if (options_.device == "cpu" || !options_.prebuild_extensions) return nullptr;
    auto queue = ExtensionBuildQueue::Create(options_, TorchArchListFor(Arch()), /*workers=*/0);
    if (queue) extension_queue_ = *queue;
  }
  return extension_queue_.get();
}

}  // namespace kforge::run
