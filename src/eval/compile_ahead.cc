#include "eval/compile_ahead.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <nlohmann/json.hpp>
#include <thread>
#include <vector>

#include "common/python_env.h"
#include "common/subprocess.h"
#include "eval/trial_seed.h"

namespace kforge {

namespace {

PrecompileOutcome BuildOne(const Task& task, const EvalOptions& opt, double timeout_s) {
  SpawnSpec spec;
  spec.argv = HarnessArgv("precompile");
  const std::vector<std::string> args = {"--task",       task.path.string(),
                                         "--device",     opt.device,
                                         "--index",      std::to_string(opt.gpu),
                                         "--model-seed", std::to_string(TrialSeed(opt.seed, -1)),
                                         "--input-seed", std::to_string(TrialSeed(opt.seed, 0))};
  spec.argv.insert(spec.argv.end(), args.begin(), args.end());
  if (opt.dtype) {
    spec.argv.push_back("--dtype");
    spec.argv.push_back(*opt.dtype);
  }
  spec.env_set = HarnessEnv();
  auto limit = std::chrono::milliseconds(static_cast<int64_t>(timeout_s * 1000));
  auto out = RunCommand(spec, limit);
  PrecompileOutcome o;
  if (!out) {
    o.error = out.error().message;
    return o;
  }
  if (out->timed_out) {
    o.error = "the build passed its time limit";
    return o;
  }
  auto j = nlohmann::json::parse(out->stdout_text, nullptr, false);
  if (!j.is_object()) {
    o.error = "the build process failed: " + out->exit.Describe();
    return o;
  }
  o.ok = j.value("ok", false);
  o.error = j.value("error", "");
  o.seconds = j.value("seconds", 0.0);
  return o;
}

}  // namespace

std::vector<PrecompileOutcome> CompileAhead(const std::vector<const Task*>& tasks,
                                            const EvalOptions& options, int jobs,
                                            double timeout_s) {
  std::vector<PrecompileOutcome> out(tasks.size());
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i = next++; i < tasks.size(); i = next++) {
      out[i] = BuildOne(*tasks[i], options, timeout_s);
    }
  };
  size_t n = std::min(tasks.size(), static_cast<size_t>(std::max(jobs, 1)));
  std::vector<std::thread> workers;
  for (size_t i = 1; i < n; ++i) workers.emplace_back(work);
  work();
  for (auto& w : workers) w.join();
  return out;
}

}  // namespace kforge
