#include "eval/integrity.h"

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

}  // namespace kforge
