// kforge_throughput: candidates per hour through kforge's evaluation path for
// one task and a folder of fixture candidates (README.md), in one mode:
//   load_inline_sequential  KernelBench .py candidates one after another, each
//                           building its extension from nothing (the anchor)
//   kernelbench_farm        the same .py candidates, their extensions built
//                           ahead by the backend's ExtensionBuildQueue (farm
//                           and cache), then evaluated in order
//   native_farm             native .cu candidates, all handed to the backend's
//                           compile farm first (as the optimize loop does when
//                           they are proposed), then evaluated in order
//
//   kforge_throughput --task TASK.py --fixtures DIR --mode MODE --out FILE.json
//                     [--gpu N] [--policy strict|any] [--max-timing-seconds S]
//                     [--skip N] [--limit N] [--stride N]
//
// --skip/--limit take a slice of the manifest, so a slow mode can be run in
// parts (the parts' candidates and wall times add up); --stride N takes every
// Nth candidate from --skip on (2: a half with the manifest's mix).
//
// The clock runs from the first submission to the last verdict. Verdicts
// (compile_error / incorrect / correct) are recorded per candidate and
// compared with the manifest's expectations. Exit 2 on bad arguments, 1 when
// an evaluation could not be done.
#include <fmt/format.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/files.h"
#include "run/evaluation_backend.h"
#include "task/task.h"

namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using Clock = std::chrono::steady_clock;

struct Args {
  fs::path task, fixtures, out;
  std::string mode;
  int gpu = 0;
  std::string policy = "strict";
  double max_timing_seconds = -1;
  int skip = 0;
  int limit = 0;
  int stride = 1;
};

[[noreturn]] void Usage(const std::string& why) {
  std::cerr << "kforge_throughput: " << why << "\n";
  std::exit(2);
}

Args Parse(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    std::string k = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) Usage(k + " needs a value");
      return argv[++i];
    };
    if (k == "--task")
      a.task = value();
    else if (k == "--fixtures")
      a.fixtures = value();
    else if (k == "--mode")
      a.mode = value();
    else if (k == "--out")
      a.out = value();
    else if (k == "--gpu")
      a.gpu = std::stoi(value());
    else if (k == "--policy")
      a.policy = value();
    else if (k == "--max-timing-seconds")
      a.max_timing_seconds = std::stod(value());
    else if (k == "--limit")
      a.limit = std::stoi(value());
    else if (k == "--skip")
      a.skip = std::stoi(value());
    else if (k == "--stride")
      a.stride = std::stoi(value());
    else
      Usage("unknown argument " + k);
  }
  if (a.task.empty() || a.fixtures.empty() || a.out.empty()) {
    Usage("--task, --fixtures and --out are required");
  }
  if (a.mode != "load_inline_sequential" && a.mode != "kernelbench_farm" &&
      a.mode != "native_farm") {
    Usage("--mode must be load_inline_sequential, kernelbench_farm or native_farm");
  }
  if (a.policy != "strict" && a.policy != "any") Usage("--policy must be strict or any");
  if (a.stride < 1 || a.skip < 0 || a.limit < 0)
    Usage("--stride must be >= 1, --skip/--limit >= 0");
  return a;
}

std::string VerdictClass(const json& r) {
  if (!r.value("compiled", false)) return "compile_error";
  return r.value("correct", false) ? "correct" : "incorrect";
}

// The result file: the rows so far and the rate over their wall time.
json WriteSummary(const Args& a, const json& rows, int mismatches, Clock::duration elapsed,
                  bool complete) {
  double wall = std::chrono::duration<double>(elapsed).count();
  json out = {
      {"mode", a.mode},
      {"task", a.task.string()},
      {"gpu", a.gpu},
      {"policy", a.policy},
      {"skip", a.skip},
      {"limit", a.limit},
      {"stride", a.stride},
      {"complete", complete},
      {"max_timing_seconds", a.max_timing_seconds > 0 ? json(a.max_timing_seconds) : json(nullptr)},
      {"candidates", static_cast<int>(rows.size())},
      {"wall_seconds", wall},
      {"candidates_per_hour", rows.empty() ? 0.0 : rows.size() * 3600.0 / wall},
      {"verdict_mismatches_vs_manifest", mismatches},
      {"results", rows}};
  std::ofstream(a.out) << out.dump(1) << "\n";
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  Args a = Parse(argc, argv);
  auto manifest_text = kforge::ReadFile(a.fixtures / "manifest.json");
  if (!manifest_text) Usage(manifest_text.error().message);
  json manifest = json::parse(*manifest_text, nullptr, false);
  if (manifest.is_discarded() || !manifest.contains("candidates")) {
    Usage("manifest.json is not a fixture manifest");
  }
  auto task = kforge::LoadTaskFile(a.task);
  if (!task) Usage(task.error().message);

  const bool native = a.mode == "native_farm";
  // Without the farm each candidate's extension is built in its own scratch
  // directory; with it, in the extension cache's entry for its source.
  ::unsetenv("TORCH_EXTENSIONS_DIR");
  kforge::EvalOptions options;
  options.prebuild_extensions = a.mode == "kernelbench_farm";
  options.device = "cuda";
  options.gpu = a.gpu;
  options.policy = a.policy == "any" ? kforge::Policy::kAny : kforge::Policy::kStrict;
  if (a.max_timing_seconds > 0) options.max_timing_seconds = a.max_timing_seconds;
  auto scratch = kforge::MakeTempDir(fs::temp_directory_path(), "kforge-throughput-");
  if (!scratch) Usage(scratch.error().message);
  kforge::run::EvaluatorBackend backend(*task, options, {a.gpu}, *scratch);

  std::vector<kforge::run::EvaluationRequest> requests;
  std::vector<json> entries;
  int index = -1;
  for (const json& c : manifest["candidates"]) {
    if (++index < a.skip || (index - a.skip) % a.stride != 0) continue;
    if (a.limit > 0 && static_cast<int>(requests.size()) >= a.limit) break;
    std::string id = c.at("id").get<std::string>();
    auto source = kforge::ReadFile(a.fixtures / (id + (native ? ".cu" : ".py")));
    if (!source) Usage(source.error().message);
    kforge::run::EvaluationRequest r;
    r.candidate_id = id;
    r.iteration = static_cast<int64_t>(requests.size());
    r.source = *source;
    r.native = native;
    requests.push_back(std::move(r));
    entries.push_back(c);
  }

  auto start = Clock::now();
  for (const auto& r : requests) backend.Prepare(r);  // no-op without a farm
  json rows = json::array();
  int mismatches = 0;
  for (size_t i = 0; i < requests.size(); ++i) {
    auto t0 = Clock::now();
    auto result = backend.Evaluate(0, requests[i]);
    double seconds = std::chrono::duration<double>(Clock::now() - t0).count();
    if (!result) {
      std::cerr << fmt::format("kforge_throughput: {}: {}\n", requests[i].candidate_id,
                               result.error().message);
      return 1;
    }
    const json& r = *result;
    std::string got = VerdictClass(r);
    std::string expect = entries[i].value("expect", "");
    if (got != expect) ++mismatches;
    json speedup = r.contains("speedup") ? r["speedup"].value("eager", json(nullptr)) : json();
    std::string error =
        r.value("error", json(nullptr)).is_string() ? r["error"].get<std::string>() : "";
    rows.push_back({{"id", requests[i].candidate_id},
                    {"expect", expect},
                    {"verdict", got},
                    {"accepted", r.value("accepted", false)},
                    {"integrity", r["integrity"].value("verdict", "")},
                    {"compile_seconds", r["compile"].value("seconds", 0.0)},
                    {"compile_cached", r["compile"].value("cached", false)},
                    {"seconds", seconds},
                    {"speedup_eager", speedup},
                    {"error", error.substr(0, 300)}});
    // Where the evaluation's time went, and what the worker's session reused.
    const json extra = r.value("extra", json::object());
    rows.back()["phase_seconds"] = extra.value("phase_seconds", json::object());
    rows.back()["session"] = extra.value("session", json::object());
    const json window = extra.value("timing_window", json::object());
    rows.back()["timing_window_seconds"] = window.value("seconds", json(nullptr));
    rows.back()["timing_stopped_by"] = window.value("stopped_by", json(nullptr));
    rows.back()["timing_window"] = window;
    // Paid by the first candidate of a session only: lets slices of a run be
    // combined as if run in one go.
    rows.back()["torch_compile_seconds"] = extra.contains("torch_compile_reused")
                                               ? json(0.0)
                                               : extra.value("torch_compile_seconds", json(0.0));
    std::string phases;
    for (const auto& [name, s] : rows.back()["phase_seconds"].items()) {
      phases += fmt::format(" {} {:.1f}", name, s.get<double>());
    }
    std::cerr << fmt::format("[{}/{}] {} {} ({:.1f} s;{})\n", i + 1, requests.size(),
                             requests[i].candidate_id, got, seconds, phases);
    // Written after every candidate: a run cut off by a time limit keeps
    // what it measured.
    WriteSummary(a, rows, mismatches, Clock::now() - start, /*complete=*/false);
  }
  double wall = std::chrono::duration<double>(Clock::now() - start).count();
  json out = WriteSummary(a, rows, mismatches, Clock::now() - start, /*complete=*/true);
  std::cout << fmt::format(
      "{}: {} candidates in {:.1f} s = {:.1f} per hour; {} verdict(s) "
      "differ from the manifest\n",
      a.mode, rows.size(), wall, out["candidates_per_hour"].get<double>(), mismatches);
  return 0;
}
