#include "search/baseline/attempt_feedback.h"

#include <fmt/format.h>

#include <algorithm>
#include <sstream>
#include <vector>

namespace kforge::search {

bool IsNewBest(const Observation& candidate, const std::optional<Observation>& best) {
  const EvalSummary& e = candidate.eval;
  if (!e.accepted || e.verdict != "ok" || !e.speedup_eager) return false;
  if (!best) return true;
  return *e.speedup_eager > best->eval.speedup_eager.value_or(0);
}

namespace {

constexpr size_t kTailLines = 12;
constexpr size_t kMaxErrorLines = 40;
constexpr size_t kMaxLineChars = 400;
constexpr size_t kMaxDetailChars = 1500;

std::vector<std::string> SplitLines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.size() > kMaxLineChars) line = line.substr(0, kMaxLineChars) + " ...";
    lines.push_back(std::move(line));
  }
  return lines;
}

bool IsErrorLine(const std::string& line) {
  return line.find("error") != std::string::npos || line.find("Error") != std::string::npos;
}

std::string FirstLine(const std::string& text) {
  size_t nl = text.find('\n');
  std::string line = nl == std::string::npos ? text : text.substr(0, nl);
  if (line.size() > kMaxLineChars) line = line.substr(0, kMaxLineChars) + " ...";
  return line;
}

std::string Clip(const std::string& text) {
  if (text.size() <= kMaxDetailChars) return text;
  return text.substr(0, kMaxDetailChars) + "\n... (cut)";
}

std::string FirstErrorLine(const std::string& log) {
  for (const std::string& line : SplitLines(log)) {
    if (IsErrorLine(line)) return line;
  }
  return "";
}

std::string Ms(double ms) {
  if (ms >= 100) return fmt::format("{:.1f} ms", ms);
  if (ms >= 1) return fmt::format("{:.3f} ms", ms);
  return fmt::format("{:.4f} ms", ms);
}

std::string FlagsText(const EvalSummary& eval) {
  std::string out;
  for (const IntegrityNote& f : eval.flags) {
    out += fmt::format("\n- {} ({}): {}", f.check, f.severity, FirstLine(f.detail));
  }
  return out;
}

}  // namespace

std::string MeasurementsText(const EvalSummary& eval) {
  if (!eval.speedup_eager) return "not timed";
  std::string out = fmt::format("{:.2f}x faster than eager PyTorch", *eval.speedup_eager);
  if (eval.candidate_ms && eval.eager_ms) {
    out += fmt::format(" ({} vs {})", Ms(*eval.candidate_ms), Ms(*eval.eager_ms));
  }
  if (eval.speedup_compile) out += fmt::format(", {:.2f}x vs torch.compile", *eval.speedup_compile);
  return out;
}

std::string FencedCode(const std::string& source, const std::string& lang) {
  std::string body = source;
  if (!body.empty() && body.back() != '\n') body += '\n';
  return "```" + lang + "\n" + body + "```";
}

std::string OutcomeLine(const Observation& o) {
  const EvalSummary& e = o.eval;
  std::string head = fmt::format("iteration {}", o.iteration);
  if (!e.compiled) {
    std::string why = FirstErrorLine(e.compile_log);
    if (why.empty() && e.error) why = FirstLine(*e.error);
    return fmt::format("{}: did not compile or load{}{}", head, why.empty() ? "" : ": ", why);
  }
  if (e.verdict == "rejected") {
    std::string checks;
    for (const IntegrityNote& f : e.flags) {
      if (f.severity != "reject") continue;
      if (!checks.empty()) checks += ", ";
      checks += f.check;
    }
    return fmt::format("{}: rejected by the integrity checks ({})", head, checks);
  }
  if (!e.correct) {
    std::string detail = e.correctness_detail ? FirstLine(*e.correctness_detail)
                         : e.error            ? FirstLine(*e.error)
                                              : "";
    return fmt::format("{}: wrong output (max abs error {:.3g}, max rel error {:.3g}){}{}", head,
                       e.max_abs_err, e.max_rel_err, detail.empty() ? "" : ": ", detail);
  }
  if (!e.accepted) {
    return fmt::format("{}: not accepted{}{}", head, e.error ? ": " : "",
                       e.error ? FirstLine(*e.error) : "");
  }
  std::string suspect = e.verdict == "suspect" ? " [suspect: kept out of the best]" : "";
  return fmt::format("{}: correct, {}{}", head, MeasurementsText(e), suspect);
}

std::string CompileErrors(const std::string& log, size_t max_chars) {
  std::vector<std::string> lines = SplitLines(log);
  std::vector<bool> keep(lines.size(), false);
  size_t errors = 0;
  for (size_t i = 0; i < lines.size() && errors < kMaxErrorLines; ++i) {
    if (!IsErrorLine(lines[i])) continue;
    keep[i] = true;
    if (i + 1 < lines.size()) keep[i + 1] = true;
    ++errors;
  }
  for (size_t i = lines.size() > kTailLines ? lines.size() - kTailLines : 0; i < lines.size();
       ++i) {
    keep[i] = true;
  }
  std::string out;
  bool gap = false;
  for (size_t i = 0; i < lines.size(); ++i) {
    if (!keep[i]) {
      gap = true;
      continue;
    }
    if (gap && !out.empty()) out += "...\n";
    gap = false;
    out += lines[i] + "\n";
  }
  if (out.size() > max_chars) out = "...\n" + out.substr(out.size() - max_chars);
  return out;
}

std::string AttemptDetails(const Observation& o, size_t max_log_chars) {
  const EvalSummary& e = o.eval;
  std::string out = OutcomeLine(o);
  if (!e.compiled) {
    std::string errors = CompileErrors(e.compile_log, max_log_chars);
    if (!errors.empty()) out += "\nBuild/load output:\n```\n" + errors + "```";
    if (e.error) out += "\n" + Clip(*e.error);
    return out;
  }
  if (!e.flags.empty()) out += "\nIntegrity flags:" + FlagsText(e);
  if (!e.correct) {
    if (e.correctness_detail) out += "\nCorrectness: " + Clip(*e.correctness_detail);
    if (e.error) out += "\nError: " + Clip(*e.error);
    return out;
  }
  if (e.error && !e.accepted) out += "\nError: " + Clip(*e.error);
  return out;
}

std::string BaselineText(std::optional<double> eager_ms, std::optional<double> compile_ms) {
  if (!eager_ms) return "";
  std::string out = fmt::format("Reference timings: eager PyTorch {}", Ms(*eager_ms));
  if (compile_ms) out += fmt::format(", torch.compile {}", Ms(*compile_ms));
  return out + ".";
}

}  // namespace kforge::search
