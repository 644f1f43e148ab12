// Candidate: a source file and its format. Formats (docs/candidate-formats.md):
//   kernelbench  Python defining ModelNew (CUDA through load_inline on cuda)
//   cpp          Python defining ModelNew with C++ load_inline (CPU)
//   native       a .cu file exporting kforge's C ABI (issue "throughput")
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "common/result.h"

namespace kforge {

enum class CandidateFormat { kKernelBench, kCpp, kNative };

struct Candidate {
  std::filesystem::path path;
  std::string source;
  std::string sha256;
  CandidateFormat format = CandidateFormat::kKernelBench;
};

std::string CandidateFormatName(CandidateFormat f);
Result<CandidateFormat> ParseCandidateFormat(const std::string& name);

// Reads the file; the format follows the extension (.py → kernelbench, or
// cpp when `device_kind` is "cpu"; .cu → native). Missing files are kBadInput.
Result<Candidate> LoadCandidateFile(const std::filesystem::path& path,
                                    const std::string& device_kind);

// One static-check finding, as the checker reports it (no severity: the
// evaluator maps check ids to severities by policy).
struct StaticFinding {
  std::string check;
  std::string detail;
  int line = 0;
};

struct StaticReport {
  std::vector<StaticFinding> findings;
  std::string parse_error;  // non-empty: the source does not even parse
};

// Runs harness/kforge_harness/static_check.py on the candidate. It parses
// the source and never executes it. With `task_path`, precision downcasts
// are judged against the task: casts to fp16/bf16 are expected when the task
// itself works in those types.
Result<StaticReport> RunStaticChecks(const Candidate& candidate,
                                     const std::vector<std::string>& allowlist,
                                     const std::filesystem::path& task_path = {});

}  // namespace kforge
