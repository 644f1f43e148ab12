// kforge profile: the profile step on its own (issue 9). One forward pass of
// a task's reference, or of a candidate, under Nsight Compute; prints each
// kernel's metrics and the program's performance state (KernelBlaster §3).
#include <fmt/format.h>

#include <iostream>
#include <nlohmann/json.hpp>

#include "cli/command.h"
#include "common/files.h"
#include "kb/ncu_profiler.h"

namespace kforge::cli {

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

struct ProfileArgs {
  std::string task, candidate, dtype, keep, ncu = "ncu";
  int gpu = 0;
  uint64_t seed = 42;
  int timeout_s = 600;
  bool json = false;
};

int RunProfile(const ProfileArgs& a) {
  std::error_code ec;
  if (!fs::is_regular_file(a.task, ec)) {
    throw OperationError{Error::BadInput("--task: no such file: " + a.task)};
  }
  if (!a.candidate.empty() && !fs::is_regular_file(a.candidate, ec)) {
    throw OperationError{Error::BadInput("--candidate: no such file: " + a.candidate)};
  }
  kb::ProfileRequest req;
  req.task = fs::absolute(a.task);
  if (!a.candidate.empty()) req.candidate = fs::absolute(a.candidate);
  req.gpu = a.gpu;
  req.dtype = a.dtype;
  req.seed = a.seed;
  req.ncu = a.ncu;
  req.timeout = std::chrono::seconds(a.timeout_s);
  std::optional<fs::path> scratch;
  if (a.keep.empty()) {
    auto dir = MakeTempDir(fs::temp_directory_path(), "kforge-profile-");
    if (!dir) throw OperationError{dir.error()};
    scratch = *dir;
    req.work_dir = *dir;
  } else {
    req.work_dir = fs::absolute(a.keep);
  }
  auto result = kb::ProfileProgram(req);
  if (scratch) fs::remove_all(*scratch, ec);
  if (!result) throw OperationError{result.error()};
  const kb::ProgramProfile& p = *result;
  if (a.json) {
    json kernels = json::array();
    for (const auto& k : p.kernels) kernels.push_back(kb::ToJson(k));
    json out = {{"task", req.task.string()},
                {"candidate", req.candidate ? json(req.candidate->string()) : json(nullptr)},
                {"state", kb::ToJson(p.state)},
                {"kernels", kernels},
                {"details", kb::SummarizeProfiles(p.kernels)}};
    std::cout << out.dump(2) << "\n";
    return 0;
  }
  std::cout << fmt::format("state: {} — {}\n", p.state.state, p.state.primary);
  if (!p.state.secondary.empty()) std::cout << fmt::format("       then: {}\n", p.state.secondary);
  std::cout << "\n" << kb::SummarizeProfiles(p.kernels) << "\n";
  return 0;
}

}  // namespace

void AddProfileCommand(CLI::App& root, CommandTable& table) {
  auto args = std::make_shared<ProfileArgs>();
  CLI::App* cmd = root.add_subcommand(
      "profile", "Profile one forward pass with Nsight Compute and name its performance state");
  cmd->add_option("--task", args->task, "KernelBench-style task file")->required();
  cmd->add_option("--candidate", args->candidate,
                  "candidate file (ModelNew); without it the task's Model is profiled");
  cmd->add_option("--gpu", args->gpu, "GPU index")->envname("KFORGE_GPU")->default_val(0);
  cmd->add_option("--dtype", args->dtype, "run in float32|float16|bfloat16");
  cmd->add_option("--seed", args->seed, "seed for weights and inputs")->default_val(42);
  cmd->add_option("--ncu", args->ncu, "the Nsight Compute CLI")
      ->envname("KFORGE_NCU")
      ->default_val("ncu");
  cmd->add_option("--timeout", args->timeout_s, "seconds before the profiled run is killed")
      ->default_val(600);
  cmd->add_option("--keep", args->keep, "keep the ncu report and log in this directory");
  cmd->add_flag("--json", args->json, "print exactly one JSON object on stdout");
  cmd->callback([&table, args] { table.selected = [args] { return RunProfile(*args); }; });
}

}  // namespace kforge::cli
