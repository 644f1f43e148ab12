// BuildFarm: a fixed pool of build workers that runs ahead of the GPU. The
// scheduler submits candidates N+1 .. N+k as soon as they exist; the GPU
// worker waits only on the future of the candidate it is about to time. Two
// submissions with the same key share one build. CompileFarm builds native
// candidates with nvcc; the evaluator's extension builds of KernelBench
// candidates use the same farm with their own request and result types.
#pragma once

#include <algorithm>
#include <condition_variable>
#include <deque>
#include <exception>
#include <functional>
#include <future>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "compile/native_compiler.h"

namespace kforge::compile {

// Result must have a std::string `error` (set when the build function throws).
template <class Request, class Result>
class BuildFarm {
 public:
  using BuildFn = std::function<Result(const Request&)>;

  // workers <= 0: one per hardware thread.
  BuildFarm(BuildFn build, int workers) : build_(std::move(build)) {
    if (workers <= 0) workers = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    for (int i = 0; i < workers; ++i) threads_.emplace_back([this] { Work(); });
  }
  // Finishes the builds already queued, then joins the workers.
  ~BuildFarm() {
    {
      std::lock_guard lock(mu_);
      stopping_ = true;
    }
    cv_.notify_all();
    for (std::thread& t : threads_) t.join();
  }
  BuildFarm(const BuildFarm&) = delete;
  BuildFarm& operator=(const BuildFarm&) = delete;

  // Queues a build (FIFO). A key already queued or building returns that
  // build's future; a finished one is built again (a cache answers it).
  std::shared_future<Result> Submit(const std::string& key, Request request) {
    std::lock_guard lock(mu_);
    if (auto it = in_flight_.find(key); it != in_flight_.end()) return it->second;
    Job job{key, std::move(request), {}};
    std::shared_future<Result> future = job.promise.get_future().share();
    in_flight_[key] = future;
    queue_.push_back(std::move(job));
    cv_.notify_one();
    return future;
  }
  int workers() const { return static_cast<int>(threads_.size()); }

 private:
  struct Job {
    std::string key;
    Request request;
    std::promise<Result> promise;
  };

  void Work() {
    while (true) {
      Job job;
      {
        std::unique_lock lock(mu_);
        cv_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
        if (queue_.empty()) return;  // stopping, and nothing left to build
        job = std::move(queue_.front());
        queue_.pop_front();
      }
      Result result;
      try {
        result = build_(job.request);
      } catch (const std::exception& e) {
        result.error = std::string("build failed: ") + e.what();
      }
      {
        std::lock_guard lock(mu_);
        in_flight_.erase(job.key);
      }
      job.promise.set_value(std::move(result));
    }
  }

  BuildFn build_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Job> queue_;
  std::map<std::string, std::shared_future<Result>> in_flight_;
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

using CompileFarm = BuildFarm<NativeBuildRequest, NativeBuildResult>;

}  // namespace kforge::compile
