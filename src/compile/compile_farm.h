// CompileFarm: a fixed pool of compile workers that runs ahead of the GPU.
// The scheduler submits candidates N+1 .. N+k as soon as they exist; the GPU
// worker waits only on the future of the candidate it is about to time. Two
// submissions with the same key share one build.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <future>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "compile/native_compiler.h"

namespace kforge::compile {

class CompileFarm {
 public:
  using BuildFn = std::function<NativeBuildResult(const NativeBuildRequest&)>;

  // workers <= 0: one per hardware thread.
  CompileFarm(BuildFn build, int workers);
  // Finishes the builds already queued, then joins the workers.
  ~CompileFarm();
  CompileFarm(const CompileFarm&) = delete;
  CompileFarm& operator=(const CompileFarm&) = delete;

  // Queues a build (FIFO). A key already queued or building returns that
  // build's future; a finished one is built again (the cache answers it).
  std::shared_future<NativeBuildResult> Submit(const std::string& key, NativeBuildRequest request);
  int workers() const { return static_cast<int>(threads_.size()); }

 private:
  struct Job {
    std::string key;
    NativeBuildRequest request;
    std::promise<NativeBuildResult> promise;
  };
  void Work();

  BuildFn build_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Job> queue_;
  std::map<std::string, std::shared_future<NativeBuildResult>> in_flight_;
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace kforge::compile
