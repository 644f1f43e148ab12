#include "eval/task_scan.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>

#include "common/files.h"
#include "eval/trial_seed.h"

namespace kforge {

namespace fs = std::filesystem;
using nlohmann::json;
using Clock = std::chrono::steady_clock;

namespace {

// A reference forward pass may be slow on a big task; the evaluator allows
// as much.
constexpr double kTrialTimeoutFloorS = 600;
constexpr double kDropTimeoutS = 60;
// The evaluator's trial id of the first input variant (evaluator.cc).
constexpr int kVariantTrialBase = 2000;

std::chrono::milliseconds Ms(double s) {
  return std::chrono::milliseconds(static_cast<int64_t>(s * 1000.0));
}

}  // namespace

json TaskScanResult::ToJson() const {
  json j = {{"task", name},
            {"path", path.string()},
            {"level", level},
            {"degenerate", degenerate},
            {"kind", degeneracy ? json(degeneracy->kind) : json(nullptr)},
            {"reason", degeneracy ? json(degeneracy->reason) : json(nullptr)},
            {"error", error ? json(*error) : json(nullptr)},
            {"error_kind", error ? json(error_kind) : json(nullptr)},
            {"seconds", seconds},
            {"seeds", seeds},
            {"tolerance", {{"atol", atol}, {"rtol", rtol}}},
            {"outputs", outputs},
            {"variants", variants}};
  return j;
}

TaskScanner::~TaskScanner() {
  StopProcess();
  std::error_code ec;
  if (!scratch_.empty() && std::getenv("KFORGE_KEEP_SCRATCH") == nullptr) {
    fs::remove_all(scratch_, ec);
  }
}

void TaskScanner::StopProcess() {
  if (ref_) ref_->Stop();
  ref_.reset();
}

std::optional<HarnessError> TaskScanner::Call(const json& cmd, double timeout_s, json* reply) {
  if (!ref_ || !ref_->alive()) {
    StopProcess();
    if (scratch_.empty()) {
      fs::path root =
          opt_.scratch_root.empty() ? fs::temp_directory_path() / "kforge" : opt_.scratch_root;
      auto dir = MakeTempDir(root, "scan-");
      if (!dir) throw OperationError{dir.error()};
      scratch_ = *dir;
    }
    HarnessProcess::Options o;
    o.role = HarnessProcess::Role::kReference;
    o.scratch_dir = scratch_ / fmt::format("reference-{}", started_++);
    o.label = "reference process";
    auto p = HarnessProcess::Start(o);
    if (!p) throw OperationError{Error::Internal(p.error().message)};
    ref_.emplace(std::move(p).value());
  }
  auto r = ref_->Call(cmd, Ms(timeout_s));
  if (auto* e = std::get_if<HarnessError>(&r)) return *e;
  *reply = std::get<json>(std::move(r));
  return std::nullopt;
}

TaskScanResult TaskScanner::Scan(const Task& task) {
  TaskScanResult out;
  out.name = task.name;
  out.path = task.path;
  out.level = task.level;
  auto t0 = Clock::now();
  auto fail = [&](const HarnessError& e) {
    out.error = e.message;
    out.error_kind = HarnessFailureName(e.failure);
    // A malformed task leaves the process well; anything else may not.
    if (e.failure == HarnessFailure::kBadTask && ref_ && ref_->alive()) {
      json ignored;
      if (Call({{"cmd", "unload"}}, kDropTimeoutS, &ignored)) StopProcess();
    } else {
      StopProcess();
    }
    out.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
    return out;
  };

  json reply;
  json load = {{"cmd", "load"},
               {"path", task.path.string()},
               {"device", opt_.device},
               {"index", opt_.gpu},
               {"seed", TrialSeed(opt_.seed, -1)},
               {"dtype", opt_.dtype ? json(*opt_.dtype) : json(nullptr)}};
  if (auto e = Call(load, opt_.compile_timeout_s, &reply)) return fail(*e);
  device_ = reply.value("device", json::object());

  // The evaluator's trials: 0..trials, the last being its same-address trial
  // (a fresh seed like the others); tolerances fixed by trial 0's dtype.
  const int trials = std::max(opt_.trials, 1);
  const double trial_timeout = std::max(opt_.compile_timeout_s, kTrialTimeoutFloorS);
  double atol = 0, rtol = 0;
  int same_as_first = 0;
  std::vector<std::vector<OutputProfile>> profiles;
  for (int k = 0; k <= trials; ++k) {
    json cmd = {{"cmd", "trial"},
                {"trial", k},
                {"seed", TrialSeed(opt_.seed, k)},
                {"input_file", nullptr},
                {"atol", atol ? atol : opt_.atol_fp32},
                {"rtol", rtol ? rtol : opt_.rtol_fp32},
                {"keep", k == 0 || k == 1}};
    if (auto e = Call(cmd, trial_timeout, &reply)) return fail(*e);
    if (k == 0) {
      std::string dtype = reply["outputs"].empty()
                              ? "torch.float32"
                              : reply["outputs"][0].value("dtype", "torch.float32");
      bool half = dtype == "torch.float16" || dtype == "torch.bfloat16";
      atol = half ? opt_.atol_half : opt_.atol_fp32;
      rtol = half ? opt_.rtol_half : opt_.rtol_fp32;
      const json& prof = reply.value("profile", json::array());
      for (size_t i = 0; i < reply["outputs"].size(); ++i) {
        const json& o = reply["outputs"][i];
        json entry = {{"shape", o.value("shape", json::array())}, {"dtype", o.value("dtype", "")}};
        if (i < prof.size()) {
          entry["max_abs"] = prof[i].value("max_abs", 0.0);
          entry["std"] = prof[i].value("std", 0.0);
          entry["near_zero_fraction"] = prof[i].value("near_zero_fraction", 0.0);
          entry["zeros_pass"] = prof[i].value("zeros_pass", false);
        }
        out.outputs.push_back(entry);
      }
    }
    auto& seed = profiles.emplace_back();
    for (const auto& p : reply.value("profile", json::array())) {
      seed.push_back(ParseOutputProfile(p));
    }
    if (reply.value("same_as_first", json(nullptr)).is_boolean() &&
        reply["same_as_first"].get<bool>()) {
      ++same_as_first;
    }
    if (k > 1) {
      if (auto e = Call({{"cmd", "drop"}, {"trial", k}}, kDropTimeoutS, &reply)) return fail(*e);
    }
  }
  // Which input variants an evaluation could use here (reference only).
  int v = 0;
  for (const auto& variant : opt_.input_variants) {
    const int id = kVariantTrialBase + v++;
    json cmd = {{"cmd", "variant"},
                {"trial", id},
                {"base_trial", 0},
                {"variant", variant},
                {"seed", TrialSeed(opt_.seed, id)},
                {"input_file", nullptr},
                {"atol", atol},
                {"rtol", rtol}};
    if (auto e = Call(cmd, trial_timeout, &reply)) return fail(*e);
    std::vector<OutputProfile> outs;
    for (const auto& p : reply.value("profile", json::array()))
      outs.push_back(ParseOutputProfile(p));
    bool same =
        reply.value("same_as_base", json(false)).is_boolean() && reply["same_as_base"].get<bool>();
    std::string skip = VariantSkipReason(reply.value("changed_inputs", 0), outs, same);
    out.variants.push_back({{"variant", variant},
                            {"usable", skip.empty()},
                            {"reason", skip.empty() ? json(nullptr) : json(skip)}});
    if (auto e = Call({{"cmd", "drop"}, {"trial", id}}, kDropTimeoutS, &reply)) return fail(*e);
  }
  if (auto e = Call({{"cmd", "unload"}}, kDropTimeoutS, &reply)) StopProcess();
  out.seeds = static_cast<int>(profiles.size());
  out.atol = atol;
  out.rtol = rtol;
  out.degeneracy = JudgeDegeneracy(profiles, same_as_first, atol, rtol);
  out.degenerate = out.degeneracy.has_value();
  out.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  return out;
}

}  // namespace kforge
