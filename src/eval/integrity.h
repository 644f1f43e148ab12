// Integrity flags and the verdict they combine into (CONTRACT.md): any
// reject-severity flag makes the verdict `rejected`; otherwise any warn makes
// it `suspect`; otherwise `ok`. Check ids are stable; docs/integrity.md
// documents each.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace kforge {

enum class Severity { kWarn, kReject };
enum class Verdict { kOk, kSuspect, kRejected };
enum class Policy { kStrict, kAny };

struct IntegrityFlag {
  std::string check;
  Severity severity = Severity::kReject;
  std::string detail;
};

Verdict CombineVerdict(const std::vector<IntegrityFlag>& flags);
std::string VerdictName(Verdict v);
std::string SeverityName(Severity s);
std::string PolicyName(Policy p);

// Severity of a static-check finding under a policy. Unknown ids reject:
// a new check is never silently ignored.
Severity StaticCheckSeverity(const std::string& check, Policy policy);
// True when the finding does not count at all under the policy (e.g.
// torch_compute under `any`).
bool StaticCheckAllowed(const std::string& check, Policy policy);

// Runtime checks (docs/integrity.md, "Runtime checks"): every id the
// evaluator emits at run time, with its severity under each policy.
struct RuntimeCheck {
  const char* id;
  Severity strict;
  Severity any;
};
const std::vector<RuntimeCheck>& RuntimeChecks();
// The check's severity under the policy; nullopt for an id that is not a
// runtime check (static ids go through StaticCheckSeverity).
std::optional<Severity> RuntimeCheckSeverity(const std::string& check, Policy policy);

// What the degeneracy rules need to know of one reference output (measured
// by the reference process, harness/kforge_harness/compare.py output_profile).
struct OutputProfile {
  int64_t numel = 0;
  int64_t nonfinite = 0;
  double near_zero_fraction = 0;
  bool zeros_pass = false;
  double max_abs = 0;
};
OutputProfile ParseOutputProfile(const nlohmann::json& j);

// Why a task's reference is degenerate. `kind` is a stable id:
// nonfinite | insensitive_to_inputs | zeros_pass | mostly_zero.
struct Degeneracy {
  std::string kind;
  std::string reason;
};
// `profiles` holds, per input seed, the profile of each output;
// `seeds_same_as_first` counts the seeds after the first whose outputs all
// equal the first seed's within (atol, rtol). Rules, most specific first:
// NaN/Inf anywhere; identical across every seed; an all-zeros answer passes
// on every seed; ≥ 99% of elements within atol of zero on every seed.
std::optional<Degeneracy> JudgeDegeneracy(const std::vector<std::vector<OutputProfile>>& profiles,
                                          int seeds_same_as_first, double atol, double rtol);

// Why an input-distribution variant cannot judge a candidate, or "" when it
// can: no input was changed, the reference is not finite or is degenerate on
// it (zeros pass, mostly zero), or its answer equals the base inputs' answer.
std::string VariantSkipReason(int changed_inputs, const std::vector<OutputProfile>& outputs,
                              bool same_as_base);

}  // namespace kforge
