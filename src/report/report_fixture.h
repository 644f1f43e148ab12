// Test-only: a store holding synthetic runs and a bench, written through the
// real Store API, so report tests (unit and scenario) read exactly what
// `kforge optimize` / `kforge bench` would leave behind. Not part of the
// product: only test targets compile it (see CMakeLists.txt).
#pragma once

#include <string>

#include "common/result.h"
#include "store/store.h"

namespace kforge::report::fixture {

// A CPU run of 12 candidates on two islands: seeds, a compile failure, an
// incorrect candidate, accepted ones improving over iterations, a suspect and
// a rejected one (with integrity flags), a crossover child with two parents,
// backtrack / crossover / idea events, priced LLM calls over ten minutes, a
// profile summary on one evaluation, and hostile text (markup, invalid
// UTF-8) in a source and an event.
constexpr const char* kRunId = "run-fixture-cpu";

// A bench of six tasks, one run each (hand-computed in
// tests/scenario/test_report.py):
//   1_Good     best ok 2.0x eager / 1.2x compile; a suspect 3.0x / 2.5x that
//              is its best only with include_suspect
//   2_Slow     accepted ok 0.5x / 0.4x
//   3_Broken   nothing accepted
//   4_Constant degenerate by the bench's record; its accepted 10x counts nowhere
//   5_Suspect  only a suspect 4.0x / 3.0x
//   6_Zeros    degenerate by its evaluation
constexpr const char* kBenchId = "bench-fixture";

Status WriteFixture(Store& store);

}  // namespace kforge::report::fixture
