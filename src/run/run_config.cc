#include "run/run_config.h"

#include <fmt/format.h>

namespace kforge::run {

namespace {
constexpr int64_t kMaxInFlightCap = 64;
constexpr int64_t kMaxKbTopK = 20;
}  // namespace

void RegisterRunConfig(ConfigSchema& s) {
  LoopOptions d;
  s.Add({"run.max_in_flight", int64_t{d.max_in_flight},
         "LLM proposals in flight at once (proposing overlaps evaluating)"});
  s.Add({"run.max_unusable_proposals", int64_t{d.max_unusable_proposals},
         "stop after this many proposals in a row gave no new candidate (failed call, no code "
         "block, duplicate)"});
  s.Add({"run.max_calls_per_candidate", int64_t{d.max_calls_per_candidate},
         "stop after this many LLM calls (any stage) in a row produced no new candidate"});
  s.Add({"run.workers", int64_t{0},
         "evaluation workers on cuda, one GPU each (0: one per visible GPU; --gpu picks one)"});
  s.Add({"run.candidate_format", std::string("kernelbench"),
         "what the LLM writes: kernelbench (a ModelNew .py: CUDA through load_inline, C++ on a "
         "CPU) or native (a .cu file with kforge's C ABI, cuda only; docs/candidate-formats.md)"});
  s.Add({"run.status_interval_ms", d.status_interval_ms,
         "how often the live status line is refreshed on a terminal"});
  KbRunOptions kb;
  s.Add({"kb.enabled", kb.enabled,
         "offer the knowledge base's techniques for the parent's performance state in code "
         "prompts, and learn from each candidate that names one"});
  s.Add({"kb.top_k", int64_t{kb.top_k}, "kb: techniques drawn (weighted random) per prompt"});
  s.Add({"kb.temperature", kb.temperature,
         "kb: selection temperature (weight gain^(1/T)); lower is greedier"});
  s.Add({"kb.textual_gradient", kb.textual_gradient,
         "kb: after each evaluation, the three text stages (kb_policy_evaluation, "
         "kb_perf_gap_analysis, kb_parameter_update) rewrite the technique's entry"});
  s.Add({"kb.refine_states", kb.refine_states,
         "kb: a profiled candidate's state, when it becomes a parent, is the one the "
         "kb_perf_gap_analysis stage names (state_after) if the knowledge base knows it, a "
         "discovered state included, instead of the rules' (needs kb.textual_gradient)"});
  s.Add({"kb.profile", kb.profile,
         "kb: auto (Nsight Compute on cuda when ncu is found; none on cpu), ncu (required), or "
         "off; without a profile the state is 'unknown'"});
  s.Add({"kb.ncu", kb.ncu, "kb: the Nsight Compute CLI"});
  s.Add({"kb.profile_timeout_s", kb.profile_timeout_s, "kb: time limit of one ncu profile"});
}

Result<LoopOptions> LoopOptionsFromConfig(const Config& c) {
  LoopOptions o;
  auto in_flight = c.GetIntInRange("run.max_in_flight", 1, kMaxInFlightCap);
  if (!in_flight) return in_flight.error();
  o.max_in_flight = *in_flight;
  int64_t unusable = c.GetInt("run.max_unusable_proposals");
  if (unusable < 1) {
    return Error::BadInput("config key 'run.max_unusable_proposals' must be at least 1");
  }
  o.max_unusable_proposals = static_cast<int>(unusable);
  int64_t per_candidate = c.GetInt("run.max_calls_per_candidate");
  if (per_candidate < 1) {
    return Error::BadInput("config key 'run.max_calls_per_candidate' must be at least 1");
  }
  o.max_calls_per_candidate = static_cast<int>(per_candidate);
  o.status_interval_ms = c.GetInt("run.status_interval_ms");
  if (o.status_interval_ms < 1) {
    return Error::BadInput("config key 'run.status_interval_ms' must be positive");
  }
  if (c.GetInt("run.workers") < 0) {
    return Error::BadInput("config key 'run.workers' cannot be negative");
  }
  return o;
}

Result<std::string> CandidateFormatFromConfig(const Config& c, const std::string& device) {
  const std::string wanted = c.GetString("run.candidate_format");
  if (wanted == "native") {
    if (device != "cuda") {
      return Error::BadInput(
          "run.candidate_format=native needs a cuda device (native candidates are .cu files)");
    }
    return wanted;
  }
  if (wanted != "kernelbench") {
    return Error::BadInput(fmt::format(
        "config key 'run.candidate_format' must be kernelbench or native, got '{}'", wanted));
  }
  return std::string(device == "cpu" ? "cpp" : "kernelbench");
}

int64_t WorkersFromConfig(const Config& c) {
  return c.GetInt("run.workers");
}

Result<KbRunOptions> KbRunOptionsFromConfig(const Config& c) {
  KbRunOptions o;
  o.enabled = c.GetBool("kb.enabled");
  auto top_k = c.GetIntInRange("kb.top_k", 1, kMaxKbTopK);
  if (!top_k) return top_k.error();
  o.top_k = *top_k;
  o.temperature = c.GetDouble("kb.temperature");
  if (!(o.temperature > 0)) return Error::BadInput("config key 'kb.temperature' must be positive");
  o.textual_gradient = c.GetBool("kb.textual_gradient");
  o.refine_states = c.GetBool("kb.refine_states");
  o.profile = c.GetString("kb.profile");
  if (o.profile != "auto" && o.profile != "ncu" && o.profile != "off") {
    return Error::BadInput(
        fmt::format("config key 'kb.profile' must be auto, ncu or off, not '{}'", o.profile));
  }
  o.ncu = c.GetString("kb.ncu");
  if (o.ncu.empty()) return Error::BadInput("config key 'kb.ncu' cannot be empty");
  o.profile_timeout_s = c.GetInt("kb.profile_timeout_s");
  if (o.profile_timeout_s < 1) {
    return Error::BadInput("config key 'kb.profile_timeout_s' must be positive");
  }
  return o;
}

}  // namespace kforge::run
