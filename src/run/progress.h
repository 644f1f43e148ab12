// What the run tells the user while it works: a line per evaluation, and on
// a terminal one live status line (iteration, best speedup, evaluations per
// minute, LLM tokens and cost) refreshed in place. Off a terminal (logs, CI)
// the status rides on the per-evaluation lines instead, so logs stay plain.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace kforge::run {

struct ProgressSnapshot {
  int64_t evaluations = 0;  // recorded in the run (all sessions)
  int64_t target = 0;
  std::optional<double> best_speedup;  // eager
  double evaluations_per_minute = 0;   // this session
  int proposing = 0;
  int evaluating = 0;
  int64_t llm_calls = 0;
  int64_t llm_tokens = 0;
  double llm_cost_usd = 0;
};

class ProgressReporter {
 public:
  virtual ~ProgressReporter() = default;
  // A permanent line (an evaluation finished, the run stopped).
  virtual void Event(const std::string& line, const ProgressSnapshot& snapshot) = 0;
  // A periodic refresh.
  virtual void Tick(const ProgressSnapshot& snapshot) = 0;
};

std::string StatusText(const ProgressSnapshot& s);

// Through LinePrinter (it knows whether stderr is a terminal).
class TerminalProgress : public ProgressReporter {
 public:
  void Event(const std::string& line, const ProgressSnapshot& snapshot) override;
  void Tick(const ProgressSnapshot& snapshot) override;
};

class SilentProgress : public ProgressReporter {
 public:
  void Event(const std::string&, const ProgressSnapshot&) override {}
  void Tick(const ProgressSnapshot&) override {}
};

}  // namespace kforge::run
