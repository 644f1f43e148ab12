#include "kb/ncu_profiler.h"

#include <fmt/format.h>

#include "common/files.h"
#include "common/python_env.h"
#include "common/subprocess.h"
#include "kb/ncu_report.h"

namespace kforge::kb {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

constexpr size_t kLogTail = 2000;

std::string Tail(const std::string& s) {
  return s.size() <= kLogTail ? s : "..." + s.substr(s.size() - kLogTail);
}

}  // namespace

std::vector<std::string> NcuProfileArgv(const ProfileRequest& r, const fs::path& report) {
  // Clocks stay as the GPU runs them (KernelBlaster profiles at unlocked
  // clocks too); only the program's one profiled call is collected.
  std::vector<std::string> argv = {r.ncu, "--clock-control",   "none",     "--profile-from-start",
                                   "off", "--force-overwrite", "--export", report.string()};
  for (const auto& s : ProfileSections()) {
    argv.push_back("--section");
    argv.push_back(s);
  }
  for (auto& a : HarnessArgv("profile")) argv.push_back(a);
  argv.insert(argv.end(),
              {"--task", r.task.string(), "--device", "cuda", "--seed", std::to_string(r.seed)});
  if (r.candidate) argv.insert(argv.end(), {"--candidate", r.candidate->string()});
  if (r.native_library) argv.insert(argv.end(), {"--native", r.native_library->string()});
  if (!r.dtype.empty()) argv.insert(argv.end(), {"--dtype", r.dtype});
  return argv;
}

std::vector<std::string> NcuExportArgv(const ProfileRequest& r, const fs::path& report) {
  return {r.ncu, "--import", report.string(), "--csv", "--page", "raw"};
}

Result<ProgramProfile> ProfileProgram(const ProfileRequest& r) {
  std::error_code ec;
  fs::create_directories(r.work_dir, ec);
  if (ec) return Error::Io(fmt::format("{}: {}", r.work_dir.string(), ec.message()));
  const fs::path report = r.work_dir / "profile.ncu-rep";
  const fs::path log = r.work_dir / "profile.log";

  SpawnSpec run;
  run.argv = NcuProfileArgv(r, report);
  run.working_dir = r.work_dir;
  run.env_set = HarnessEnv();
  run.env_set["CUDA_VISIBLE_DEVICES"] = std::to_string(r.gpu);
  run.stderr_path = log;  // stdout comes back in the result
  // The candidate's code runs in this child: no network, its own group.
  run.sandbox.isolate_network = true;
  run.sandbox.loopback_up = true;  // ncu reaches its target process over loopback
  auto ran = RunCommand(run, r.timeout);
  if (!ran) return ran.error();
  auto err_text = ReadFile(log);
  std::string tail = Tail(ran->stdout_text + (err_text ? *err_text : ""));
  if (ran->timed_out) {
    return Error::Timeout(
        fmt::format("ncu did not finish within {} s\n{}", r.timeout.count(), tail));
  }
  if (!ran->exit.exited || ran->exit.exit_code != 0) {
    // The harness exits 2 for a task or candidate it cannot load.
    bool bad_input =
        ran->exit.exited && ran->exit.exit_code == 2 && tail.find("profile: ") != std::string::npos;
    std::string what = fmt::format("profiling failed ({})\n{}", ran->exit.Describe(), tail);
    return bad_input ? Error::BadInput(what) : Error::Io(what);
  }

  SpawnSpec exp;
  exp.argv = NcuExportArgv(r, report);
  exp.working_dir = r.work_dir;
  exp.stderr_path = log.string() + ".export";
  auto csv = RunCommand(exp, std::chrono::seconds(120));
  if (!csv) return csv.error();
  if (csv->timed_out || !csv->exit.exited || csv->exit.exit_code != 0) {
    return Error::Io(fmt::format("ncu --import failed ({})", csv->exit.Describe()));
  }
  ProgramProfile out;
  out.raw_csv = std::move(csv->stdout_text);
  if (out.raw_csv.find_first_not_of(" \r\n") == std::string::npos) {
    return Error::BadInput("the program launched no CUDA kernel in its profiled call\n" + tail);
  }
  auto kernels = ParseNcuRawCsv(out.raw_csv);
  if (!kernels) return kernels.error();
  if (kernels->empty()) {
    return Error::BadInput("the program launched no CUDA kernel in its profiled call");
  }
  out.kernels = std::move(kernels).value();
  out.state = ClassifyProgram(out.kernels);
  return out;
}

json ToJson(const KernelProfile& k) {
  auto pct = [](double v) { return v < 0 ? json(nullptr) : json(v); };
  json stalls = json::array();
  for (const auto& [reason, share] : k.top_stalls) {
    stalls.push_back({{"reason", reason}, {"pct", share}});
  }
  json j = {{"name", k.name},
            {"launches", k.launches},
            {"duration_us", k.duration_us},
            {"compute_sol_pct", pct(k.compute_sol_pct)},
            {"memory_sol_pct", pct(k.memory_sol_pct)},
            {"achieved_occupancy_pct", pct(k.achieved_occupancy_pct)},
            {"registers_per_thread",
             k.registers_per_thread < 0 ? json(nullptr) : json(k.registers_per_thread)},
            {"l2_throughput_pct", pct(k.l2_throughput_pct)},
            {"dram_throughput_pct", pct(k.dram_throughput_pct)},
            {"top_stalls", stalls},
            {"state", ToJson(ClassifyKernel(k))}};
  return j;
}

json ToJson(const StateClassification& s) {
  return {{"state", s.state}, {"primary", s.primary}, {"secondary", s.secondary}};
}

}  // namespace kforge::kb
