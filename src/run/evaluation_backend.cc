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
      scratch_dir_(std::move(scratch_dir)),
      builds_(options_, gpus_.empty() ? options_.gpu : gpus_.front()) {
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

std::optional<int> EvaluatorBackend::GpuOf(int worker) const {
  if (options_.device == "cpu" || worker < 0 || worker >= workers()) return std::nullopt;
  return gpus_[static_cast<size_t>(worker)];
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
  builds_.Apply(options, request.native);
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
  builds_.Prepare(request.source, request.native);
}

Result<std::filesystem::path> EvaluatorBackend::BuildNativeLibrary(const std::string& source) {
  return builds_.BuildNativeLibrary(source);
}

}  // namespace kforge::run
