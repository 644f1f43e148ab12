#include "eval/device_identity.h"

#include <fmt/format.h>

#include <chrono>
#include <nlohmann/json.hpp>

#include "common/python_env.h"
#include "common/subprocess.h"

namespace kforge {

namespace {

// Importing torch and initialising CUDA; generous for a cold page cache.
constexpr auto kProbeTimeout = std::chrono::seconds(180);

}  // namespace

Result<DeviceIdentity> ProbeHarnessDevice(const std::string& kind, int index) {
  if (kind != "auto" && kind != "cuda" && kind != "cpu") {
    return Error::BadInput(fmt::format("--device must be auto, cuda or cpu, not '{}'", kind));
  }
  SpawnSpec spec;
  spec.argv = HarnessArgv("device");
  spec.argv.push_back(kind);
  spec.argv.push_back(std::to_string(index));
  spec.env_set = HarnessEnv();
  auto out = RunCommand(spec, std::chrono::duration_cast<std::chrono::milliseconds>(kProbeTimeout));
  if (!out) return out.error();
  if (out->timed_out) return Error::Internal("the device probe did not answer in time");
  auto j = nlohmann::json::parse(out->stdout_text, nullptr, false);
  if (!j.is_object()) {
    return Error::Internal("the device probe failed: " + out->exit.Describe());
  }
  if (!j.value("ok", false)) {
    return Error::BadInput(
        fmt::format("--device {} --gpu {}: {}", kind, index, j.value("error", "unavailable")));
  }
  DeviceIdentity d;
  d.kind = j.value("kind", "");
  d.name = j.value("name", "");
  d.torch_version = j.value("torch_version", "");
  d.index = j.value("index", index);
  return d;
}

}  // namespace kforge
