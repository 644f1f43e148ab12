#include "run/signal_stop.h"

#include <atomic>

namespace kforge::run {

namespace {

std::atomic<StopRequest*> g_stop{nullptr};
std::atomic<int> g_last_signal{0};

extern "C" void OnStopSignal(int sig) {
  g_last_signal.store(sig, std::memory_order_relaxed);
  if (StopRequest* stop = g_stop.load(std::memory_order_relaxed)) stop->Request();
}

}  // namespace

SignalStop::SignalStop(StopRequest& stop) {
  g_stop.store(&stop);
  struct sigaction sa {};
  sa.sa_handler = OnStopSignal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  ::sigaction(SIGINT, &sa, &old_int_);
  ::sigaction(SIGTERM, &sa, &old_term_);
}

SignalStop::~SignalStop() {
  ::sigaction(SIGINT, &old_int_, nullptr);
  ::sigaction(SIGTERM, &old_term_, nullptr);
  g_stop.store(nullptr);
}

int SignalStop::last_signal() {
  return g_last_signal.load(std::memory_order_relaxed);
}

}  // namespace kforge::run
