#include "run/progress.h"

#include <fmt/format.h>

#include "common/line_printer.h"

namespace kforge::run {

namespace {

std::string Tokens(int64_t n) {
  if (n >= 1000000) return fmt::format("{:.1f}M", n / 1e6);
  if (n >= 1000) return fmt::format("{:.1f}k", n / 1e3);
  return std::to_string(n);
}

}  // namespace

std::string StatusText(const ProgressSnapshot& s) {
  std::string best = s.best_speedup ? fmt::format("{:.2f}x", *s.best_speedup) : "-";
  return fmt::format(
      "iteration {}/{} | best {} | {:.1f} eval/min | {} proposing, {} evaluating | LLM {} calls, "
      "{} tokens, ${:.4f}",
      s.evaluations, s.target, best, s.evaluations_per_minute, s.proposing, s.evaluating,
      s.llm_calls, Tokens(s.llm_tokens), s.llm_cost_usd);
}

void TerminalProgress::Event(const std::string& line, const ProgressSnapshot& snapshot) {
  LinePrinter& out = LinePrinter::Get();
  if (out.smart_terminal()) {
    out.Line(line);
    out.Status(StatusText(snapshot));
  } else {
    out.Line(line + " | " + StatusText(snapshot));
  }
}

void TerminalProgress::Tick(const ProgressSnapshot& snapshot) {
  LinePrinter& out = LinePrinter::Get();
  if (out.smart_terminal()) out.Status(StatusText(snapshot));
}

}  // namespace kforge::run
