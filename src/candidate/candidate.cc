#include "candidate/candidate.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "common/files.h"
#include "common/hash.h"
#include "common/python_env.h"
#include "common/subprocess.h"

namespace kforge {

namespace fs = std::filesystem;

namespace {
constexpr auto kStaticCheckTimeout = std::chrono::seconds(60);
}

std::string CandidateFormatName(CandidateFormat f) {
  switch (f) {
    case CandidateFormat::kKernelBench:
      return "kernelbench";
    case CandidateFormat::kCpp:
      return "cpp";
    case CandidateFormat::kNative:
      return "native";
  }
  return "kernelbench";
}

Result<CandidateFormat> ParseCandidateFormat(const std::string& name) {
  if (name == "kernelbench") return CandidateFormat::kKernelBench;
  if (name == "cpp") return CandidateFormat::kCpp;
  if (name == "native") return CandidateFormat::kNative;
  return Error::BadInput(
      fmt::format("unknown candidate format '{}' (kernelbench|cpp|native)", name));
}

Result<Candidate> LoadCandidateFile(const fs::path& path, const std::string& device_kind) {
  std::error_code ec;
  if (!fs::exists(path, ec)) {
    return Error::BadInput(fmt::format("candidate file not found: {}", path.string()));
  }
  Candidate c;
  c.path = fs::absolute(path).lexically_normal();
  if (path.extension() == ".py") {
    c.format = device_kind == "cpu" ? CandidateFormat::kCpp : CandidateFormat::kKernelBench;
  } else if (path.extension() == ".cu") {
    c.format = CandidateFormat::kNative;
  } else {
    return Error::BadInput(
        fmt::format("candidate must be a .py (ModelNew) or .cu (native) file: {}", path.string()));
  }
  auto source = ReadFile(path);
  if (!source) return Error::BadInput(source.error().message);
  c.source = std::move(source).value();
  c.sha256 = Sha256Hex(c.source);
  return c;
}

Result<StaticReport> RunStaticChecks(const Candidate& candidate,
                                     const std::vector<std::string>& allowlist,
                                     const fs::path& task_path) {
  SpawnSpec spec;
  spec.argv = HarnessArgv("static_check");
  spec.argv.push_back("--format");
  spec.argv.push_back(CandidateFormatName(candidate.format));
  for (const auto& a : allowlist) {
    spec.argv.push_back("--allow");
    spec.argv.push_back(a);
  }
  if (!task_path.empty()) {
    spec.argv.push_back("--task");
    spec.argv.push_back(task_path.string());
  }
  spec.argv.push_back(candidate.path.string());
  spec.env_set = HarnessEnv();
  auto out = RunCommand(spec, kStaticCheckTimeout);
  if (!out) return out.error();
  if (out->timed_out) return Error::Timeout("static checker timed out");
  auto j = nlohmann::json::parse(out->stdout_text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) {
    return Error::Internal(fmt::format("static checker failed ({}): {}", out->exit.Describe(),
                                       out->stdout_text.substr(0, 300)));
  }
  StaticReport report;
  if (j.contains("parse_error") && j["parse_error"].is_string()) {
    report.parse_error = j["parse_error"].get<std::string>();
  }
  for (const auto& f : j.value("findings", nlohmann::json::array())) {
    report.findings.push_back(
        {f.value("check", "unknown"), f.value("detail", ""), f.value("line", 0)});
  }
  return report;
}

}  // namespace kforge
