// How an evaluation is told back to the model: one line per attempt for a
// history, and the details of the last attempt (compiler errors, correctness
// failure, integrity flags, timing) for the next proposal to act on.
#pragma once

#include <cstddef>
#include <optional>
#include <string>

#include "search/strategy.h"

namespace kforge::search {

// Whether `candidate` replaces `best` as the best: accepted with verdict ok
// (a suspect result is never built on) and strictly faster than eager by
// more than `best` (ties go to the earlier one); any such candidate beats none.
bool IsNewBest(const Observation& candidate, const std::optional<Observation>& best);

// The source in a fence of `lang` ("python", "cuda"; a trailing newline
// added when missing).
std::string FencedCode(const std::string& source, const std::string& lang);
// "1.95x faster than eager PyTorch (0.41 ms vs 0.80 ms), 1.34x vs torch.compile".
std::string MeasurementsText(const EvalSummary& eval);
// One line: "iteration 3: compile failed: error: 'foo' was not declared".
std::string OutcomeLine(const Observation& observation);
// Several lines for the attempt the model should learn from, ending before
// its source. Compiler output is reduced to its error lines and tail, at most
// `max_log_chars`.
std::string AttemptDetails(const Observation& observation, size_t max_log_chars);
// "Reference timings: eager PyTorch 0.80 ms, torch.compile 0.55 ms." or empty.
std::string BaselineText(std::optional<double> eager_ms, std::optional<double> compile_ms);
// The compiler's error lines (with one line of context after each) and its
// last lines, at most max_chars.
std::string CompileErrors(const std::string& log, size_t max_chars);

}  // namespace kforge::search
