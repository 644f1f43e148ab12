// What an agent's compile, verify and profile tools tell the model: the
// environment's evaluation of the draft (the contract's `kforge eval --json`
// object) condensed to what a kernel engineer reads — the compiler's errors
// and resources, the correctness verdict with its error sizes, the integrity
// flags, the times and speedups, and for profile the draft's Nsight Compute
// summary when the run added one (`agent_profile`: text or error). The whole
// object stays in the trajectory.
// The tool's result puts "<tool>: ok|failed" above this summary.
#pragma once

#include <nlohmann/json.hpp>

#include "agent/agent_tools.h"

namespace kforge::agent {

enum class CheckKind { kCompile, kVerify, kProfile };
const char* CheckKindName(CheckKind kind);

// `ok`: compile — it built and loaded; verify — its outputs matched and no
// integrity check rejected it; profile — the evaluation accepted it.
CheckReport CheckReportFromEvaluation(CheckKind kind, const nlohmann::json& eval);

}  // namespace kforge::agent
