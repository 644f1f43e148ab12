// Integrity flags and the verdict they combine into (CONTRACT.md): any
// reject-severity flag makes the verdict `rejected`; otherwise any warn makes
// it `suspect`; otherwise `ok`. Check ids are stable; docs/integrity.md
// documents each.
#pragma once

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

}  // namespace kforge
