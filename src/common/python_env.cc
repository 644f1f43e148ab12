#include "common/python_env.h"

#include <unistd.h>

#include <cstdlib>

namespace kforge {

namespace fs = std::filesystem;

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
  return {{"PYTHONPATH", path},
          {"PYTHONUNBUFFERED", "1"},
          {"PYTHONDONTWRITEBYTECODE", "1"},
          {"OMP_WAIT_POLICY", "PASSIVE"}};
}

}  // namespace kforge
