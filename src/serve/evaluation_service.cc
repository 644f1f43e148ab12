#include "serve/evaluation_service.h"

#include <fmt/format.h>

#include <cstdlib>
#include <cstring>
#include <exception>
#include <system_error>

#include "common/files.h"
#include "task/task.h"

namespace kforge::serve {

namespace fs = std::filesystem;

namespace {

// Removes the request's scratch directory when the evaluation is over.
class ScratchDir {
 public:
  explicit ScratchDir(fs::path path) : path_(std::move(path)) {}
  ~ScratchDir() {
    const char* keep = std::getenv("KFORGE_KEEP_SCRATCH");
    if (keep != nullptr && std::strcmp(keep, "1") == 0) return;
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

}  // namespace

InProcessEvaluationService::InProcessEvaluationService(EvalOptions options, std::vector<int> gpus,
                                                       int cpu_workers, std::string hardware,
                                                       fs::path scratch_root)
    : options_(std::move(options)),
      gpus_(std::move(gpus)),
      cpu_workers_(cpu_workers),
      hardware_(std::move(hardware)),
      scratch_root_(std::move(scratch_root)) {
  for (int w = 0; w < workers(); ++w) {
    sessions_.push_back(std::make_unique<EvaluationSession>(
        scratch_root_ / fmt::format("session-{}", w), options_.reuse_reference));
  }
  if (options_.device == "cuda" && !gpus_.empty()) {
    builds_ = std::make_unique<BuildsAhead>(options_, gpus_.front());
    // Made now (nvcc and torch probed), not on the first request's thread.
    builds_->Warm();
  }
}

void InProcessEvaluationService::Prepare(const EvaluateRequest& request) {
  if (builds_ == nullptr || request.format == CandidateFormat::kCpp) return;
  builds_->Prepare(request.candidate_source, request.format == CandidateFormat::kNative);
}

int InProcessEvaluationService::workers() const {
  return options_.device == "cpu" ? cpu_workers_ : static_cast<int>(gpus_.size());
}

nlohmann::json InProcessEvaluationService::DeviceJson() const {
  nlohmann::json j = {{"kind", options_.device}, {"hardware", hardware_}};
  if (options_.device == "cuda") j["gpus"] = gpus_;
  return j;
}

Result<nlohmann::json> InProcessEvaluationService::Evaluate(int worker,
                                                            const EvaluateRequest& request) {
  if (worker < 0 || worker >= workers()) {
    return Error::Internal(fmt::format("no evaluation worker {}", worker));
  }
  const bool cpu = options_.device == "cpu";
  // The formats each device runs (docs/candidate-formats.md); a kernelbench
  // candidate on a cpu server is read as cpp, as `kforge eval --device cpu` does.
  if (cpu && request.format == CandidateFormat::kNative) {
    return Error::BadInput("format native needs a cuda device; this server evaluates on cpu");
  }
  if (!cpu && request.format == CandidateFormat::kCpp) {
    return Error::BadInput("format cpp needs a cpu device; this server evaluates on cuda");
  }
  auto dir = MakeTempDir(scratch_root_, "request-");
  if (!dir) return dir.error();
  ScratchDir scratch(*dir);

  fs::path task_path = scratch.path() / (request.task_name + ".py");
  if (Status st = WriteFileAtomic(task_path, request.task_source); !st) return st.error();
  auto task = LoadTaskFile(task_path);
  if (!task) return task.error();

  const bool native = request.format == CandidateFormat::kNative;
  fs::path candidate_path = scratch.path() / (native ? "cand.cu" : "cand.py");
  if (Status st = WriteFileAtomic(candidate_path, request.candidate_source); !st) {
    return st.error();
  }
  auto candidate = LoadCandidateFile(candidate_path, options_.device);
  if (!candidate) return candidate.error();

  EvalOptions options = options_;
  options.policy = request.policy;
  if (!cpu) options.gpu = gpus_[static_cast<size_t>(worker)];
  if (builds_) builds_->Apply(options, native);
  options.scratch_root = scratch.path() / "eval";
  try {
    Evaluator evaluator(options);
    EvalResult result =
        evaluator.Evaluate(*task, *candidate, sessions_[static_cast<size_t>(worker)].get());
    return result.ToJson();
  } catch (const OperationError& e) {
    return e.error;
  } catch (const std::exception& e) {
    return Error::Internal(fmt::format("evaluation failed: {}", e.what()));
  }
}

}  // namespace kforge::serve
