#include "eval/eval_result.h"

#include <fmt/format.h>

namespace kforge {

namespace {

using nlohmann::json;

json OptNum(const std::optional<double>& v) {
  return v ? json(*v) : json(nullptr);
}
json OptStr(const std::optional<std::string>& v) {
  return v ? json(*v) : json(nullptr);
}

json TimingJson(const std::optional<TimingSummary>& t) {
  if (!t) return nullptr;
  json j = {{"median", t->stats.median},
            {"mean", t->stats.mean},
            {"p10", t->stats.p10},
            {"p90", t->stats.p90},
            {"samples", t->stats.samples},
            {"rel_stddev", t->stats.rel_stddev},
            {"overhead_ms", t->overhead_ms},
            {"calls_per_sample", t->calls_per_sample},
            {"cached", t->cached}};
  j["event_median"] = OptNum(t->event_median_ms);
  return j;
}

}  // namespace

int MilestoneReward(bool accepted, std::optional<double> se, std::optional<double> sc) {
  if (!accepted) return -1;
  bool beats_eager = se && *se > kMilestoneMargin;
  bool beats_compile = sc && *sc > kMilestoneMargin;
  if (beats_eager && beats_compile) return 3;
  if (beats_eager) return 2;
  return 1;
}

json EvalResult::ToJson() const {
  json flags_json = json::array();
  for (const auto& f : flags) {
    flags_json.push_back(
        {{"check", f.check}, {"severity", SeverityName(f.severity)}, {"detail", f.detail}});
  }
  json j;
  j["kforge_version"] = kforge_version;
  j["task"] = {{"name", task_name},
               {"path", task_path},
               {"sha256", task_sha256},
               {"degenerate", degenerate},
               {"degenerate_reason", OptStr(degenerate_reason)},
               {"degenerate_kind", OptStr(degenerate_kind)}};
  j["candidate"] = {
      {"path", candidate_path}, {"format", candidate_format}, {"sha256", candidate_sha256}};
  j["device"] = {{"kind", device_kind},
                 {"name", device_name},
                 {"index", device_index},
                 {"torch_version", torch_version}};
  j["policy"] = PolicyName(policy);
  j["compiled"] = compiled;
  j["compile"] = {{"seconds", compile_seconds},
                  {"cached", compile_cached},
                  {"log", compile_log},
                  {"resources", compile_resources}};
  j["correct"] = correct;
  j["correctness"] = {{"trials", trials},
                      {"max_abs_err", max_abs_err},
                      {"max_rel_err", max_rel_err},
                      {"normwise_rel_err", normwise_rel_err},
                      {"detail", OptStr(correctness_detail)}};
  j["timing"] = {{"candidate_ms", TimingJson(candidate_ms)},
                 {"eager_ms", TimingJson(eager_ms)},
                 {"compile_ms", TimingJson(compile_ms)}};
  j["speedup"] = {{"eager", OptNum(speedup_eager)}, {"compile", OptNum(speedup_compile)}};
  j["sol"] = {{"floor_ms", OptNum(sol_floor_ms)},
              {"fraction", OptNum(sol_fraction)},
              {"detail", sol_detail.is_null() ? json::object() : sol_detail}};
  j["integrity"] = {{"verdict", VerdictName(verdict())}, {"flags", flags_json}};
  j["accepted"] = accepted;
  j["reward"] = {{"milestone", milestone}, {"speedup_compile", OptNum(speedup_compile)}};
  j["error"] = OptStr(error);
  if (!extra.is_null()) j["extra"] = extra;
  return j;
}

std::string EvalResult::ToText() const {
  std::string s;
  s += fmt::format("task       {} ({})\n", task_name, task_path);
  s += fmt::format("candidate  {} [{}]\n", candidate_path, candidate_format);
  s += fmt::format("device     {} {} (torch {}), policy {}\n", device_kind, device_name,
                   torch_version, PolicyName(policy));
  if (degenerate) s += fmt::format("task       DEGENERATE: {}\n", degenerate_reason.value_or(""));
  s += fmt::format("compiled   {} ({:.1f} s)\n", compiled ? "yes" : "no", compile_seconds);
  if (compiled) {
    s += fmt::format(
        "correct    {} over {} trials (max abs {:.3g}, max rel {:.3g}, normwise {:.3g})\n",
        correct ? "yes" : "NO", trials, max_abs_err, max_rel_err, normwise_rel_err);
  }
  if (correctness_detail) s += fmt::format("           {}\n", *correctness_detail);
  auto line = [&](const char* name, const std::optional<TimingSummary>& t) {
    if (!t) return;
    s += fmt::format(
        "{:<10} median {:.4f} ms  (p10 {:.4f}, p90 {:.4f}, n={}, rel_stddev {:.2f}%{})\n", name,
        t->stats.median, t->stats.p10, t->stats.p90, t->stats.samples, 100 * t->stats.rel_stddev,
        t->cached ? ", cached" : "");
  };
  line("candidate", candidate_ms);
  line("eager", eager_ms);
  line("compile", compile_ms);
  if (speedup_eager) {
    s += fmt::format("speedup    {:.3f}x vs eager", *speedup_eager);
    if (speedup_compile) s += fmt::format(", {:.3f}x vs torch.compile", *speedup_compile);
    s += "\n";
  }
  if (sol_floor_ms) {
    s += fmt::format(
        "SOL floor  {:.4f} ms{}\n", *sol_floor_ms,
        sol_fraction ? fmt::format(" (candidate reaches {:.1f}% of it)", 100 * *sol_fraction) : "");
  }
  s += fmt::format("integrity  {}\n", VerdictName(verdict()));
  for (const auto& f : flags) {
    s += fmt::format("  [{}] {}: {}\n", SeverityName(f.severity), f.check, f.detail);
  }
  s += fmt::format("accepted   {} (milestone reward {})\n", accepted ? "yes" : "no", milestone);
  if (error) s += fmt::format("error      {}\n", *error);
  return s;
}

}  // namespace kforge
