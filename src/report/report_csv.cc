#include "report/report_csv.h"

#include <fmt/format.h>

#include <optional>
#include <vector>

namespace kforge::report {

namespace {

std::string Num(const std::optional<double>& v) {
  return v ? fmt::format("{}", *v) : "";
}

std::string Bool(bool v) {
  return v ? "true" : "false";
}

std::string Join(const std::vector<std::string>& parts, char sep) {
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i > 0) out += sep;
    out += parts[i];
  }
  return out;
}

void AppendRow(std::string& out, const std::vector<std::string>& cells) {
  for (size_t i = 0; i < cells.size(); ++i) {
    if (i > 0) out += ',';
    out += CsvField(cells[i]);
  }
  out += "\r\n";  // RFC 4180 line ends
}

}  // namespace

std::string CsvField(std::string_view value) {
  if (value.find_first_of(",\"\r\n") == std::string_view::npos) return std::string(value);
  std::string out = "\"";
  for (char c : value) {
    if (c == '"') out += '"';
    out += c;
  }
  out += '"';
  return out;
}

std::string RunReportCsv(const RunReport& r) {
  std::string out;
  AppendRow(out, {"run_id",    "candidate_id", "iteration",     "island",          "parents",
                  "format",    "evaluated",    "compiled",      "correct",         "accepted",
                  "headline",  "verdict",      "speedup_eager", "speedup_compile", "candidate_ms",
                  "eager_ms",  "compile_ms",   "sol_fraction",  "milestone",       "flags",
                  "created_at"});
  for (const CandidateRow& c : r.candidates) {
    std::vector<std::string> flags;
    for (const FlagRow& f : c.flags) flags.push_back(f.check + ":" + f.severity);
    AppendRow(out, {r.run.id,
                    c.id,
                    std::to_string(c.iteration),
                    std::to_string(c.island),
                    Join(c.parent_ids, ';'),
                    c.format,
                    Bool(c.evaluated),
                    Bool(c.compiled),
                    Bool(c.correct),
                    Bool(c.accepted),
                    Bool(c.headline),
                    c.verdict,
                    Num(c.speedup_eager),
                    Num(c.speedup_compile),
                    Num(c.candidate_ms),
                    Num(c.eager_ms),
                    Num(c.compile_ms),
                    Num(c.sol_fraction),
                    c.evaluated ? std::to_string(c.milestone) : "",
                    Join(flags, ';'),
                    c.created_at});
  }
  return out;
}

std::string BenchReportCsv(const BenchReport& r) {
  std::string out;
  AppendRow(out,
            {"bench_id", "task", "task_path", "run_id", "status", "degenerate", "degenerate_reason",
             "accepted", "headline", "verdict", "candidate_id", "speedup_eager", "speedup_compile",
             "evaluations", "input_tokens", "output_tokens", "cost_usd"});
  for (const TaskOutcome& o : r.tasks) {
    AppendRow(out, {r.bench.id, o.task, o.task_path, o.run_id, o.run_status, Bool(o.degenerate),
                    o.degenerate_reason, Bool(o.accepted), Bool(CountsInHeadline(o, r.options)),
                    o.verdict, o.candidate_id, Num(o.speedup_eager), Num(o.speedup_compile),
                    std::to_string(o.evaluations), std::to_string(o.input_tokens),
                    std::to_string(o.output_tokens), fmt::format("{}", o.cost_usd)});
  }
  return out;
}

}  // namespace kforge::report
