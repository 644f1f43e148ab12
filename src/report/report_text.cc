#include "report/report_text.h"

#include <fmt/format.h>

#include <map>

#include "report/number_format.h"
#include "report/text_table.h"

namespace kforge::report {

namespace {

using Align = TextTable::Align;

std::string StatsLine(const char* baseline, const SpeedupStats& s) {
  if (s.count == 0) return fmt::format("  vs {:<8} no accepted speedups\n", baseline);
  return fmt::format("  vs {:<8} n={:<4} geomean {}  mean {}  median {}  p25 {}  p75 {}  max {}\n",
                     baseline, s.count, FormatSpeedup(s.geomean), FormatSpeedup(s.mean),
                     FormatSpeedup(s.median), FormatSpeedup(s.p25), FormatSpeedup(s.p75),
                     FormatSpeedup(s.max));
}

std::string ShortId(const std::string& id) {
  constexpr size_t kShown = 10;
  return id.size() > kShown ? id.substr(0, kShown) : id;
}

std::string Joined(const std::vector<std::string>& ids) {
  std::string out;
  for (const std::string& id : ids) out += (out.empty() ? "" : ",") + ShortId(id);
  return out.empty() ? kMissing : out;
}

// The first failure, else the integrity verdict.
std::string ResultOf(const CandidateRow& c) {
  if (!c.evaluated) return "pending";
  if (!c.compiled) return "compile failed";
  if (!c.correct) return "incorrect";
  return c.verdict;
}

std::string SuspectNote(bool include_suspect) {
  return include_suspect ? "suspect results included (--include-suspect)"
                         : "suspect results excluded from headline numbers";
}

}  // namespace

std::string RunReportText(const RunReport& r) {
  const RunTotals& t = r.totals;
  std::string out;
  out += fmt::format("run {}  [{}]\n", r.run.id, RunStatusName(r.run.status));
  out += fmt::format("  task {} ({})\n", r.run.task_name, r.run.task_path);
  out += fmt::format("  strategy {}, llm {}, device {}, {} islands, target {} evaluations\n",
                     r.run.strategy, r.run.llm_spec, r.run.device, r.run.islands,
                     r.run.iterations_target);
  out += fmt::format(
      "\ncandidates {}  evaluated {}  compiled {}  correct {}  accepted {}  (headline {}, "
      "suspect {}, rejected {})\n",
      t.candidates, t.evaluations, t.compiled, t.correct, t.accepted, t.headline, t.suspect,
      t.rejected);
  if (!r.outcome.candidate_id.empty()) {
    out += fmt::format("best {}: {} vs eager, {} vs compile (verdict {}{})\n",
                       r.outcome.candidate_id, FormatSpeedup(r.outcome.speedup_eager),
                       FormatSpeedup(r.outcome.speedup_compile), r.outcome.verdict,
                       CountsInHeadline(r.outcome, r.options) ? "" : ", not counted");
  } else {
    out += "best: no accepted candidate\n";
  }
  out += fmt::format("speedups of headline candidates ({}):\n",
                     SuspectNote(r.options.include_suspect));
  out += StatsLine("eager", t.eager);
  out += StatsLine("compile", t.compile);
  out += fmt::format("LLM {} calls, {} input + {} output tokens, {}\n", t.usage.calls,
                     FormatCount(t.usage.input_tokens), FormatCount(t.usage.output_tokens),
                     FormatUsd(t.usage.cost_usd));

  TextTable table;
  table.AddColumn("iter", Align::kRight);
  table.AddColumn("isl", Align::kRight);
  table.AddColumn("candidate");
  table.AddColumn("parents");
  table.AddColumn("compiled");
  table.AddColumn("correct");
  table.AddColumn("result");
  table.AddColumn("eager", Align::kRight);
  table.AddColumn("compile", Align::kRight);
  table.AddColumn("flags");
  for (const CandidateRow& c : r.candidates) {
    std::string flags;
    for (const FlagRow& f : c.flags) flags += (flags.empty() ? "" : ",") + f.check;
    table.AddRow({std::to_string(c.iteration), std::to_string(c.island), ShortId(c.id),
                  Joined(c.parent_ids), c.evaluated ? (c.compiled ? "yes" : "no") : kMissing,
                  c.evaluated ? (c.correct ? "yes" : "no") : kMissing, ResultOf(c),
                  FormatSpeedup(c.speedup_eager), FormatSpeedup(c.speedup_compile), flags});
  }
  if (!table.empty()) out += "\n" + table.Render();

  if (!r.events.empty()) {
    std::map<std::string, int> by_type;
    for (const EventMarker& e : r.events) ++by_type[e.type];
    out += "\nevents:";
    for (const auto& [type, n] : by_type) out += fmt::format(" {} {}", type, n);
    out += "\n";
  }
  return out;
}

std::string BenchReportText(const BenchReport& r) {
  const SuiteMetrics& m = r.metrics;
  std::string out;
  out += fmt::format("bench {}  suite {}\n", r.bench.id, r.bench.suite);
  out += fmt::format("  strategy {}, llm {}, device {}, target {} evaluations per task\n",
                     r.bench.strategy, r.bench.llm_spec, r.bench.device, r.bench.iterations_target);
  out += fmt::format(
      "\ntasks {} (n = {} non-degenerate; {} degenerate, in no rate)  accepted {}  pass rate {}\n",
      m.tasks_total, m.tasks, m.degenerate_tasks, m.accepted_tasks, FormatRate(m.pass_rate));
  out += fmt::format("suspect {} ({})\n", m.suspect_tasks, SuspectNote(m.include_suspect));

  TextTable rates;
  rates.AddColumn("vs");
  for (double p : kFastPThresholds) rates.AddColumn("fast_" + ThresholdKey(p), Align::kRight);
  rates.AddColumn("faster", Align::kRight);
  rates.AddColumn("geomean", Align::kRight);
  for (Baseline b : {Baseline::kEager, Baseline::kCompile}) {
    const BaselineMetrics& bm = m.of(b);
    std::vector<std::string> row = {std::string(BaselineName(b))};
    for (const auto& f : bm.fast_p) row.push_back(FormatRate(f));
    row.push_back(FormatRate(bm.faster_rate));
    row.push_back(FormatSpeedup(bm.stats.geomean));
    rates.AddRow(row);
  }
  out += "\n" + rates.Render();
  out += "\nspeedup distribution over accepted tasks:\n";
  out += StatsLine("eager", m.eager.stats);
  out += StatsLine("compile", m.compile.stats);
  out += fmt::format(
      "\ncost {} ({} per task), tokens {} ({} per task)\n", FormatUsd(m.cost_usd),
      m.cost_usd_per_task ? FormatUsd(*m.cost_usd_per_task) : kMissing, FormatCount(m.tokens()),
      m.tokens_per_task ? FormatCount(static_cast<int64_t>(*m.tokens_per_task + 0.5)) : kMissing);

  TextTable tasks;
  tasks.AddColumn("task");
  tasks.AddColumn("run");
  tasks.AddColumn("status");
  tasks.AddColumn("result");
  tasks.AddColumn("eager", Align::kRight);
  tasks.AddColumn("compile", Align::kRight);
  tasks.AddColumn("evals", Align::kRight);
  tasks.AddColumn("cost", Align::kRight);
  for (const TaskOutcome& o : r.tasks) {
    std::string result = o.degenerate                     ? "degenerate"
                         : CountsInHeadline(o, r.options) ? "accepted"
                         : o.accepted                     ? o.verdict + " (not counted)"
                                                          : "no accepted candidate";
    tasks.AddRow({o.task, o.run_id, o.run_status, result, FormatSpeedup(o.speedup_eager),
                  FormatSpeedup(o.speedup_compile), std::to_string(o.evaluations),
                  FormatUsd(o.cost_usd)});
  }
  if (!tasks.empty()) out += "\n" + tasks.Render();
  if (m.degenerate_tasks > 0) {
    out += "\ndegenerate tasks (reported separately, excluded from every rate):\n";
    for (const TaskOutcome& o : r.tasks) {
      if (!o.degenerate) continue;
      out += fmt::format("  {}: {}\n", o.task,
                         o.degenerate_reason.empty() ? "degenerate" : o.degenerate_reason);
    }
  }
  return out;
}

}  // namespace kforge::report
