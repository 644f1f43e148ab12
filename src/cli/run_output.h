// What `optimize` and `resume` print when the run ends, and their exit code.
#pragma once

#include "run/run_launcher.h"
#include "store/store.h"

namespace kforge::cli {

// Prints the result (CONTRACT.md JSON with --json, else a summary), says how
// to continue a stopped run, and returns the exit code: 0 completed or
// stopped by a budget or for want of new candidates, 130 stopped by a
// signal, 2 failed on the user's input, 1 failed otherwise. A run whose work
// was abandoned in flight ends the process here (std::_Exit): its threads
// are still running and must not see the store destroyed.
int FinishRunCommand(Store& store, const run::RunEnd& end, bool json);

}  // namespace kforge::cli
