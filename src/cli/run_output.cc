#include "cli/run_output.h"

#include <fmt/format.h>

#include <cstdio>
#include <cstdlib>
#include <iostream>

#include "common/line_printer.h"
#include "llm/types.h"
#include "run/run_report.h"
#include "run/signal_stop.h"

namespace kforge::cli {

namespace {

constexpr int kExitInterrupted = 130;

std::string Speedup(const nlohmann::json& v) {
  return v.is_number() ? fmt::format("{:.2f}x", v.get<double>()) : "n/a";
}

std::string Summary(const nlohmann::json& r) {
  std::string out = fmt::format("run {} {}: {}/{} evaluations\n", r["run_id"].get<std::string>(),
                                r["status"].get<std::string>(), r["evaluations"].get<int64_t>(),
                                r["target"].get<int64_t>());
  const nlohmann::json& best = r["best"];
  if (best.is_null()) {
    out += "best: no accepted candidate\n";
  } else {
    out +=
        fmt::format("best: candidate {} (iteration {}): {} vs eager PyTorch, {} vs torch.compile\n",
                    best["candidate_id"].get<std::string>(), best["iteration"].get<int64_t>(),
                    Speedup(best["speedup"]["eager"]), Speedup(best["speedup"]["compile"]));
  }
  const nlohmann::json& llm = r["llm"];
  out += fmt::format("LLM: {} calls, {} input + {} output tokens, ${:.4f}\n",
                     llm["calls"].get<int64_t>(), llm["input_tokens"].get<int64_t>(),
                     llm["output_tokens"].get<int64_t>(), llm["cost_usd"].get<double>());
  return out;
}

}  // namespace

int FinishRunCommand(Store& store, const run::RunEnd& end, bool json) {
  (void)store.Flush();
  const run::LoopOutcome& o = end.outcome;
  auto result = run::RunResultJson(store, end.run_id, &o);
  if (!result) throw OperationError{result.error()};
  if (json) {
    std::cout << llm::DumpJson(*result) << std::endl;
  } else {
    std::cout << Summary(*result);
  }
  LinePrinter& out = LinePrinter::Get();
  int code = run::RunExitCode(o);
  if (o.status == RunStatus::kFailed) {
    out.Line(fmt::format("kforge: error: run {} failed: {}", end.run_id, o.reason));
    out.Line(fmt::format("kforge: after fixing the cause: kforge resume {}", end.run_id));
  } else if (o.status == RunStatus::kStopped) {
    out.Line(fmt::format("kforge: run {} stopped ({}); continue with: kforge resume {}", end.run_id,
                         o.reason, end.run_id));
    if (run::SignalStop::last_signal() != 0) code = kExitInterrupted;
  } else if (!result->at("best").is_null()) {
    out.Line(
        fmt::format("kforge: export the best kernel with: kforge best {} --out DIR", end.run_id));
  }
  if (o.abandoned) {
    std::fflush(stdout);
    std::fflush(stderr);
    std::_Exit(code);
  }
  return code;
}

}  // namespace kforge::cli
