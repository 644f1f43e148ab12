#include "common/python_env.h"

#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <string>

namespace kforge {

namespace fs = std::filesystem;

namespace {
// Above any single tensor a task allocates on the host: blocks stay on the heap.
constexpr uint64_t kMallocMmapThresholdBytes = uint64_t{4} << 30;
// Freed heap memory is kept for reuse rather than returned to the kernel.
constexpr uint64_t kMallocTrimThresholdBytes = uint64_t{64} << 30;
}  // namespace

std::string PythonExecutable() {
  if (const char* p = std::getenv("KFORGE_PYTHON"); p && *p) return p;
  return "python3";
}

fs::path HarnessDir() {
  if (const char* d = std::getenv("KFORGE_HARNESS_DIR"); d && *d) return d;
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    fs::path beside = exe.parent_path().parent_path() / "harness";
    if (fs::exists(beside / "kforge_harness", ec)) return beside;
  }
  return fs::path(KFORGE_SOURCE_DIR) / "harness";
}

std::vector<std::string> HarnessArgv(const std::string& module) {
  return {PythonExecutable(), "-u", "-m", "kforge_harness." + module};
}

std::map<std::string, std::string> HarnessEnv() {
  std::string path = HarnessDir().string();
  if (const char* old = std::getenv("PYTHONPATH"); old && *old) path += std::string(":") + old;
  // Two harness processes take turns on the same cores: OpenMP threads that
  // spin-wait after a parallel region would steal them from the timed one.
  //
  // glibc's malloc serves large blocks with mmap and raises that threshold
  // as the process frees them, so whether a 16 MiB tensor costs ~2,900 page
  // faults per call or none depends on each process's allocation history:
  // on a CPU device the same eager program measured 5.4 to 17.3 ms between
  // runs, and a fused candidate 2 or 7.7 ms. Fixed thresholds keep freed
  // blocks for reuse in both processes alike (no faults after warm-up), as
  // PyTorch's caching allocator does on a GPU.
  return {{"PYTHONPATH", path},
          {"PYTHONUNBUFFERED", "1"},
          {"PYTHONDONTWRITEBYTECODE", "1"},
          {"OMP_WAIT_POLICY", "PASSIVE"},
          {"MALLOC_MMAP_THRESHOLD_", std::to_string(kMallocMmapThresholdBytes)},
          {"MALLOC_TRIM_THRESHOLD_", std::to_string(kMallocTrimThresholdBytes)}};
}

}  // namespace kforge
