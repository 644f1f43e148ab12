// How a run is asked to stop (Ctrl-C, SIGTERM, or a test). The first request
// stops it cleanly: no new proposals or evaluations, the ones in flight
// finish and are recorded. A second request abandons what is in flight
// (the evaluation jobs stay pending and `kforge resume` redoes them).
// Counting is a lock-free atomic, so a signal handler may call Request().
#pragma once

#include <atomic>

namespace kforge::run {

class StopRequest {
 public:
  void Request() { count_.fetch_add(1, std::memory_order_relaxed); }
  bool requested() const { return count_.load(std::memory_order_relaxed) >= 1; }
  bool abandon() const { return count_.load(std::memory_order_relaxed) >= 2; }

 private:
  std::atomic<int> count_{0};
  static_assert(std::atomic<int>::is_always_lock_free);
};

}  // namespace kforge::run
