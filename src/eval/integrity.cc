#include "eval/integrity.h"

#include <fmt/format.h>

#include <map>

namespace kforge {

Verdict CombineVerdict(const std::vector<IntegrityFlag>& flags) {
  Verdict v = Verdict::kOk;
  for (const auto& f : flags) {
    if (f.severity == Severity::kReject) return Verdict::kRejected;
    v = Verdict::kSuspect;
  }
  return v;
}

std::string VerdictName(Verdict v) {
  switch (v) {
    case Verdict::kOk:
      return "ok";
    case Verdict::kSuspect:
      return "suspect";
    case Verdict::kRejected:
      return "rejected";
  }
  return "rejected";
}

std::string SeverityName(Severity s) {
  return s == Severity::kWarn ? "warn" : "reject";
}
std::string PolicyName(Policy p) {
  return p == Policy::kStrict ? "strict" : "any";
}

namespace {

struct StaticRule {
  Severity strict;
  Severity any;
  bool allowed_under_any = false;
};

const std::map<std::string, StaticRule>& Rules() {
  // Under `any` the user wants any faster program: torch compute is allowed,
  // and stream use only warns because kforge's device-wide timing already
  // counts work on every stream.
  static const std::map<std::string, StaticRule> rules = {
      {"torch_compute", {Severity::kReject, Severity::kWarn, true}},
      {"torch_compile", {Severity::kReject, Severity::kReject}},
      {"cuda_graph", {Severity::kReject, Severity::kReject}},
      {"stream_creation", {Severity::kReject, Severity::kWarn}},
      {"try_fallback", {Severity::kReject, Severity::kReject}},
      {"reference_reuse", {Severity::kReject, Severity::kReject}},
      {"threading", {Severity::kReject, Severity::kReject}},
      {"monkey_patch", {Severity::kReject, Severity::kReject}},
      {"ctypes_dlopen", {Severity::kReject, Severity::kReject}},
      {"unexpected_import", {Severity::kReject, Severity::kReject}},
      {"file_env_network", {Severity::kReject, Severity::kReject}},
      {"precision_downcast", {Severity::kWarn, Severity::kWarn}},
      {"library_compute", {Severity::kReject, Severity::kWarn, true}},
      {"tensor_subclass", {Severity::kReject, Severity::kReject}},
      {"opaque_code", {Severity::kReject, Severity::kReject}},
  };
  return rules;
}

}  // namespace

Severity StaticCheckSeverity(const std::string& check, Policy policy) {
  auto it = Rules().find(check);
  if (it == Rules().end()) return Severity::kReject;
  return policy == Policy::kStrict ? it->second.strict : it->second.any;
}

bool StaticCheckAllowed(const std::string& check, Policy policy) {
  auto it = Rules().find(check);
  return it != Rules().end() && policy == Policy::kAny && it->second.allowed_under_any;
}

const std::vector<RuntimeCheck>& RuntimeChecks() {
  // Under `any` a side stream only warns, as stream_creation does: kforge's
  // device-wide timing counts the work wherever it ran. Under `strict` it is
  // the same offence as stream_creation, found at run time.
  static const std::vector<RuntimeCheck> checks = {
      {"timer_patched", Severity::kReject, Severity::kReject},
      {"output_not_tensor", Severity::kReject, Severity::kReject},
      {"output_aliases_input", Severity::kReject, Severity::kReject},
      {"output_aliases_parameter", Severity::kReject, Severity::kReject},
      {"inputs_mutated", Severity::kReject, Severity::kReject},
      {"thread_spawned", Severity::kReject, Severity::kReject},
      {"output_depends_on_memory_state", Severity::kReject, Severity::kReject},
      {"result_caching", Severity::kReject, Severity::kReject},
      {"input_independent_output", Severity::kReject, Severity::kReject},
      {"input_distribution_shortcut", Severity::kReject, Severity::kReject},
      {"timed_output_mismatch", Severity::kReject, Severity::kReject},
      {"output_mutated_later", Severity::kReject, Severity::kReject},
      {"side_stream", Severity::kReject, Severity::kWarn},
      {"below_sol_floor", Severity::kWarn, Severity::kWarn},
      {"implausible_speedup", Severity::kWarn, Severity::kWarn},
      {"degenerate_task", Severity::kWarn, Severity::kWarn},
  };
  return checks;
}

std::optional<Severity> RuntimeCheckSeverity(const std::string& check, Policy policy) {
  for (const auto& c : RuntimeChecks()) {
    if (check == c.id) return policy == Policy::kStrict ? c.strict : c.any;
  }
  return std::nullopt;
}

OutputProfile ParseOutputProfile(const nlohmann::json& j) {
  OutputProfile p;
  if (!j.is_object()) return p;
  p.numel = j.value("numel", int64_t{0});
  p.nonfinite = j.value("nonfinite", int64_t{0});
  p.near_zero_fraction = j.value("near_zero_fraction", 0.0);
  p.zeros_pass = j.value("zeros_pass", false);
  p.max_abs = j.value("max_abs", 0.0);
  return p;
}

namespace {
// "Mostly zero": at least this fraction of the elements within atol of zero.
constexpr double kMostlyZeroFraction = 0.99;
}  // namespace

std::optional<Degeneracy> JudgeDegeneracy(const std::vector<std::vector<OutputProfile>>& profiles,
                                          int seeds_same_as_first, double atol, double rtol) {
  const int n = static_cast<int>(profiles.size());
  if (n == 0) return std::nullopt;
  bool all_zero_pass = true, all_mostly_zero = true, any_nonfinite = false;
  for (const auto& seed : profiles) {
    for (const auto& o : seed) {
      all_zero_pass = all_zero_pass && o.zeros_pass;
      all_mostly_zero = all_mostly_zero && o.near_zero_fraction >= kMostlyZeroFraction;
      any_nonfinite = any_nonfinite || o.nonfinite > 0;
    }
  }
  if (any_nonfinite) return Degeneracy{"nonfinite", "reference output contains NaN/Inf"};
  if (n > 1 && seeds_same_as_first == n - 1) {
    return Degeneracy{
        "insensitive_to_inputs",
        fmt::format("output is identical across {} input seeds (insensitive to inputs)", n)};
  }
  if (all_zero_pass) {
    return Degeneracy{"zeros_pass",
                      fmt::format("an all-zeros output passes atol={:g} rtol={:g}", atol, rtol)};
  }
  if (all_mostly_zero) {
    return Degeneracy{
        "mostly_zero",
        fmt::format("at least 99% of output elements are within atol={:g} of zero", atol)};
  }
  return std::nullopt;
}

std::string VariantSkipReason(int changed_inputs, const std::vector<OutputProfile>& outputs,
                              bool same_as_base) {
  if (changed_inputs == 0) return "no floating-point input to vary";
  // One seed: the per-output rules (NaN/Inf, zeros pass, mostly zero) apply.
  if (auto d = JudgeDegeneracy({outputs}, 0, 0, 0)) {
    return d->kind == "nonfinite" ? "the reference is not finite on it"
                                  : "the reference is degenerate on it (" + d->kind + ")";
  }
  if (same_as_base) return "the reference's answer does not change";
  return "";
}

}  // namespace kforge
