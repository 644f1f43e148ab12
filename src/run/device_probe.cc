#include "run/device_probe.h"

#include <fmt/format.h>
#include <sys/utsname.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>

#include "common/python_env.h"
#include "common/subprocess.h"

namespace kforge::run {

namespace {

constexpr auto kProbeTimeout = std::chrono::seconds(180);

constexpr const char* kProbeScript =
    "import json, torch\n"
    "ok = torch.cuda.is_available()\n"
    "n = torch.cuda.device_count() if ok else 0\n"
    "names = []\n"
    "for i in range(n):\n"
    "    major, minor = torch.cuda.get_device_capability(i)\n"
    "    names.append('%s (sm_%d%d)' % (torch.cuda.get_device_name(i), major, minor))\n"
    "print(json.dumps({'cuda': ok, 'names': names}))\n";

}  // namespace

std::string CpuDescription() {
  std::string model;
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) != 0) continue;
    size_t colon = line.find(':');
    if (colon != std::string::npos) model = line.substr(line.find_first_not_of(" \t", colon + 1));
    break;
  }
  utsname u{};
  std::string arch = ::uname(&u) == 0 ? u.machine : "unknown";
  unsigned cores = std::thread::hardware_concurrency();
  return fmt::format("{} CPU{}{}, {} cores", arch, model.empty() ? "" : ": ", model, cores);
}

Result<DeviceInfo> ProbeDevice(const std::string& requested, int gpu) {
  if (requested != "auto" && requested != "cuda" && requested != "cpu") {
    return Error::BadInput(fmt::format("--device must be auto, cuda or cpu, not '{}'", requested));
  }
  DeviceInfo info;
  if (requested == "cpu") {
    info.kind = "cpu";
    info.hardware = CpuDescription();
    return info;
  }
  SpawnSpec spec;
  spec.argv = {PythonExecutable(), "-c", kProbeScript};
  auto out = RunCommand(spec, std::chrono::duration_cast<std::chrono::milliseconds>(kProbeTimeout));
  nlohmann::json probe;
  if (out && out->exit.exited && out->exit.exit_code == 0) {
    probe = nlohmann::json::parse(out->stdout_text, nullptr, false);
  }
  bool cuda = probe.is_object() && probe.value("cuda", false);
  if (!cuda) {
    if (requested == "cuda") {
      return Error::BadInput(
          fmt::format("--device cuda: PyTorch ({}) sees no CUDA device", PythonExecutable()));
    }
    info.kind = "cpu";
    info.hardware = CpuDescription();
    return info;
  }
  std::vector<std::string> names = probe.value("names", std::vector<std::string>{});
  info.kind = "cuda";
  info.visible_gpus = static_cast<int>(names.size());
  if (gpu >= info.visible_gpus) {
    return Error::BadInput(fmt::format("--gpu {}: PyTorch sees {} GPU(s)", gpu, info.visible_gpus));
  }
  info.hardware = names.empty() ? "an NVIDIA GPU" : names[gpu >= 0 ? gpu : 0];
  return info;
}

}  // namespace kforge::run
