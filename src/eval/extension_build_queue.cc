#include "eval/extension_build_queue.h"

#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <thread>

#include "common/files.h"
#include "common/python_env.h"
#include "common/subprocess.h"

namespace kforge {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

constexpr const char* kOutcomeFile = "prebuild.json";
constexpr size_t kLogTail = 8000;

std::string Tail(const std::string& s) {
  return s.size() > kLogTail ? s.substr(s.size() - kLogTail) : s;
}

}  // namespace

std::string TorchArchListFor(const std::string& native_arch) {
  std::string digits = native_arch.rfind("sm_", 0) == 0 ? native_arch.substr(3) : native_arch;
  std::string suffix;
  if (!digits.empty() && std::isalpha(static_cast<unsigned char>(digits.back()))) {
    suffix = digits.back();
    digits.pop_back();
  }
  if (digits.size() < 2) return "9.0";
  return digits.substr(0, digits.size() - 1) + "." + digits.back() + suffix;
}

ExtensionBuildQueue::ExtensionBuildQueue(compile::CompileCache cache, const EvalOptions& options,
                                         std::string torch_version, std::string arch_list,
                                         int workers)
    : cache_(std::move(cache)),
      memory_limit_bytes_(CandidateMemoryLimit(options)),
      timeout_s_(options.compile_timeout_s),
      isolate_network_(options.isolate_network),
      torch_version_(std::move(torch_version)),
      arch_list_(std::move(arch_list)) {
  int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  if (workers <= 0) workers = std::max(1, cores / 2);
  // Each build's ninja gets its share of the cores: together they fill the
  // machine without piling up.
  ninja_jobs_ = std::max(1, cores / workers);
  farm_ = std::make_unique<compile::BuildFarm<Request, ExtensionPrebuild>>(
      [this](const Request& r) { return Build(r); }, workers);
}

Result<std::shared_ptr<ExtensionBuildQueue>> ExtensionBuildQueue::Create(const EvalOptions& options,
                                                                         std::string arch_list,
                                                                         int workers) {
  SpawnSpec probe;
  probe.argv = {PythonExecutable(), "-c", "import torch; print(torch.__version__)"};
  auto out = RunCommand(probe, std::chrono::seconds(120));
  if (!out || !out->exit.exited || out->exit.exit_code != 0) {
    return Error::BadInput(fmt::format("cannot run {} with torch to build extensions ({})",
                                       PythonExecutable(),
                                       out ? out->exit.Describe() : out.error().message));
  }
  std::string version = out->stdout_text;
  while (!version.empty() && std::isspace(static_cast<unsigned char>(version.back()))) {
    version.pop_back();
  }
  auto cache =
      compile::CompileCache::Open(CacheDir() / "torch_extensions", options.native_cache_max_bytes);
  if (!cache) return cache.error();
  return std::shared_ptr<ExtensionBuildQueue>(new ExtensionBuildQueue(
      std::move(cache).value(), options, std::move(version), std::move(arch_list), workers));
}

std::string ExtensionBuildQueue::KeyFor(const std::string& source) const {
  return compile::CacheKey({source, "torch " + torch_version_, {}, arch_list_, 0});
}

void ExtensionBuildQueue::Submit(const std::string& source) {
  farm_->Submit(KeyFor(source), Request{source});
}

ExtensionPrebuild ExtensionBuildQueue::Get(const std::string& source) {
  return farm_->Submit(KeyFor(source), Request{source}).get();
}

std::function<ExtensionPrebuild(const Candidate&)> ExtensionBuildQueue::AsBuildStep() {
  return [this](const Candidate& c) { return Get(c.source); };
}

ExtensionPrebuild ExtensionBuildQueue::Build(const Request& request) const {
  ExtensionPrebuild pb;
  std::string key = KeyFor(request.source);
  fs::path dir = cache_.EntryDir(key);
  fs::path extensions = dir / "torch_extensions";
  pb.env = {{"TORCH_EXTENSIONS_DIR", extensions.string()}, {"TORCH_CUDA_ARCH_LIST", arch_list_}};
  // A finished entry (its outcome written last) is a hit; a directory
  // without one is a build that was cut off, done again in place.
  if (cache_.Lookup(key)) {
    if (auto text = ReadFile(dir / kOutcomeFile)) {
      json saved = json::parse(*text, nullptr, false);
      if (saved.is_object()) {
        pb.ok = true;
        pb.cached = true;
        pb.build_failed = saved.value("build_failed", false);
        pb.error = saved.value("error", "");
        pb.log = saved.value("log", "");
        return pb;
      }
    }
  }
  std::error_code ec;
  fs::create_directories(extensions, ec);
  if (ec) {
    pb.error = fmt::format("extension cache: {}", ec.message());
    return pb;
  }
  fs::path candidate = dir / "candidate.py";
  if (Status st = WriteFileAtomic(candidate, request.source); !st) {
    pb.error = st.error().message;
    return pb;
  }
  SpawnSpec spec;
  spec.argv = HarnessArgv("prebuild");
  spec.argv.push_back(candidate.string());
  spec.env_set = HarnessEnv();
  for (const auto& [k, v] : pb.env) spec.env_set[k] = v;
  spec.env_set["CUDA_VISIBLE_DEVICES"] = "";  // builds run beside timing: no GPU here
  spec.env_set["MAX_JOBS"] = std::to_string(ninja_jobs_);
  spec.working_dir = dir;
  spec.stderr_path = dir / "build.log";
  // The candidate process's sandbox, but with an address-space limit: no
  // CUDA context here, so RLIMIT_AS is safe and needs no polling.
  spec.sandbox.address_space_bytes = memory_limit_bytes_;
  spec.sandbox.isolate_network = isolate_network_;
  auto start = std::chrono::steady_clock::now();
  auto out = RunCommand(spec, std::chrono::milliseconds(static_cast<int64_t>(timeout_s_ * 1000)));
  pb.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  auto log = ReadFile(dir / "build.log");
  pb.log = Tail(log ? *log : "");
  if (!out || out->timed_out || !out->exit.exited || out->exit.exit_code != 0) {
    // Not a verdict on the source (a timeout may be the machine's load): the
    // candidate process builds it again and meets whatever this was.
    pb.error = !out ? out.error().message
               : out->timed_out
                   ? fmt::format("the build did not finish within {:.0f} s", timeout_s_)
                   : "the build process " + out->exit.Describe();
    fs::remove_all(dir, ec);
    return pb;
  }
  json reply = json::parse(out->stdout_text, nullptr, false);
  if (!reply.is_object()) {
    pb.error = "the build process printed no outcome";
    return pb;
  }
  pb.ok = true;
  pb.build_failed = reply.value("build_error", false);
  if (!reply.value("ok", false))
    pb.error = reply.value("error", json("")).is_string() ? reply["error"].get<std::string>() : "";
  if (!pb.build_failed) {
    // Imported, or failed for a reason the evaluation will meet itself (say,
    // a GPU wanted at import): either way the candidate process takes over.
    pb.error.clear();
  }
  json saved = {{"build_failed", pb.build_failed}, {"error", pb.error}, {"log", pb.log}};
  (void)WriteFileAtomic(dir / kOutcomeFile, saved.dump());
  cache_.Evict(key);
  return pb;
}

}  // namespace kforge
