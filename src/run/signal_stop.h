// Routes SIGINT and SIGTERM to a StopRequest while an object of this class
// lives (the first signal stops the run cleanly, the second abandons the work
// in flight), and restores the previous handlers afterwards.
#pragma once

#include <signal.h>

#include "run/stop_request.h"

namespace kforge::run {

class SignalStop {
 public:
  explicit SignalStop(StopRequest& stop);
  ~SignalStop();
  SignalStop(const SignalStop&) = delete;
  SignalStop& operator=(const SignalStop&) = delete;

  // The signal that asked for the stop (0: none).
  static int last_signal();

 private:
  struct sigaction old_int_ {};
  struct sigaction old_term_ {};
};

}  // namespace kforge::run
