#include "compile/native_compiler.h"

#include <fmt/format.h>

#include <regex>

#include "common/files.h"
#include "common/subprocess.h"

namespace kforge::compile {

namespace fs = std::filesystem;

namespace {

constexpr const char* kLibrary = "kernel.so";
constexpr const char* kLog = "build.log";
constexpr const char* kSourceName = "kernel.cu";
constexpr const char* kAbiName = "kforge_native.h";

std::string LastNonEmptyLine(const std::string& text) {
  std::string last, line;
  for (char c : text + "\n") {
    if (c == '\n') {
      if (!line.empty()) last = line;
      line.clear();
    } else {
      line += c;
    }
  }
  return last;
}

std::string FirstErrorLine(const std::string& log) {
  static const std::regex kError(R"(error)", std::regex::icase);
  std::string line;
  for (char c : log + "\n") {
    if (c == '\n') {
      if (std::regex_search(line, kError)) return line;
      line.clear();
    } else {
      line += c;
    }
  }
  return LastNonEmptyLine(log);
}

}  // namespace

std::vector<std::string> NativeCompiler::Flags(const std::string& arch) {
  std::string compute = arch;
  if (compute.rfind("sm_", 0) == 0) compute = "compute_" + compute.substr(3);
  return {"-O3",        "-std=c++17", "-shared",
          "-Xcompiler", "-fPIC",      "-Xptxas",
          "-v",         "-lineinfo",  fmt::format("-gencode=arch={},code={}", compute, arch)};
}

Result<NativeCompiler> NativeCompiler::Create(const std::string& nvcc, CompileCache cache,
                                              std::chrono::seconds timeout) {
  SpawnSpec spec;
  spec.argv = {nvcc, "--version"};
  auto out = RunCommand(spec, std::chrono::seconds(60));
  if (!out || !out->exit.exited || out->exit.exit_code != 0) {
    return Error::BadInput(fmt::format("cannot run the CUDA compiler '{}' ({})", nvcc,
                                       out ? out->exit.Describe() : out.error().message));
  }
  return NativeCompiler(nvcc, LastNonEmptyLine(out->stdout_text), std::move(cache), timeout);
}

std::string NativeCompiler::KeyFor(const NativeBuildRequest& r) const {
  std::vector<std::string> flags = Flags(r.arch);
  flags.insert(flags.end(), r.extra_flags.begin(), r.extra_flags.end());
  return CacheKey({r.source, compiler_version_, flags, r.arch, kNativeAbiVersion});
}

NativeBuildResult NativeCompiler::Build(const NativeBuildRequest& r) const {
  NativeBuildResult result;
  result.key = KeyFor(r);
  auto finish_from = [&](const CacheEntry& entry, bool hit) {
    result.cache_hit = hit;
    auto log = ReadFile(entry.dir / kLog);
    result.log = log ? *log : "";
    result.resources = ParsePtxasLog(result.log);
    result.ok = fs::exists(entry.dir / kLibrary);
    if (result.ok) {
      result.library = entry.dir / kLibrary;
    } else {
      result.error = FirstErrorLine(result.log);
    }
  };
  // Failed builds are cached too: the same source fails the same way.
  if (auto hit = cache_.Lookup(result.key)) {
    finish_from(*hit, true);
    return result;
  }
  auto staging = cache_.StagingDir();
  if (!staging) {
    result.error = staging.error().message;
    return result;
  }
  if (Status st = WriteFileAtomic(*staging / kSourceName, r.source); !st) {
    result.error = st.error().message;
    return result;
  }
  if (Status st = WriteFileAtomic(*staging / kAbiName, std::string(NativeAbiHeader())); !st) {
    result.error = st.error().message;
    return result;
  }
  SpawnSpec spec;
  spec.argv = {nvcc_};
  for (const std::string& f : Flags(r.arch)) spec.argv.push_back(f);
  for (const std::string& f : r.extra_flags) spec.argv.push_back(f);
  spec.argv.insert(spec.argv.end(), {"-I.", kSourceName, "-o", kLibrary});
  spec.working_dir = *staging;
  spec.stderr_path = *staging / "stderr.txt";
  auto start = std::chrono::steady_clock::now();
  auto out = RunCommand(spec, timeout_);
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  auto err = ReadFile(*staging / "stderr.txt");
  std::string log = (out ? out->stdout_text : "") + (err ? *err : "");
  if (!out) {
    log += "\n" + out.error().message;
  } else if (out->timed_out) {
    log += fmt::format("\nnvcc did not finish within {} s", timeout_.count());
    fs::remove(*staging / kLibrary);
  } else if (!out->exit.exited || out->exit.exit_code != 0) {
    fs::remove(*staging / kLibrary);
  }
  std::error_code ec;
  fs::remove(*staging / "stderr.txt", ec);
  (void)WriteFileAtomic(*staging / kLog, log);
  bool timed_out = out && out->timed_out;
  if (timed_out) {
    // A timeout may be the machine's load, not the source: do not cache it.
    result.log = log;
    result.error = FirstErrorLine(log);
    fs::remove_all(*staging, ec);
    return result;
  }
  auto entry = cache_.Publish(result.key, *staging);
  if (!entry) {
    result.log = log;
    result.error = entry.error().message;
    return result;
  }
  double seconds = result.seconds;
  finish_from(*entry, false);
  result.seconds = seconds;
  return result;
}

}  // namespace kforge::compile
