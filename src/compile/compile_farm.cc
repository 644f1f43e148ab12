#include "compile/compile_farm.h"

#include <algorithm>

namespace kforge::compile {

CompileFarm::CompileFarm(BuildFn build, int workers) : build_(std::move(build)) {
  if (workers <= 0) workers = std::max(1u, std::thread::hardware_concurrency());
  for (int i = 0; i < workers; ++i) threads_.emplace_back([this] { Work(); });
}

CompileFarm::~CompileFarm() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  for (std::thread& t : threads_) t.join();
}

std::shared_future<NativeBuildResult> CompileFarm::Submit(const std::string& key,
                                                          NativeBuildRequest request) {
  std::lock_guard lock(mu_);
  if (auto it = in_flight_.find(key); it != in_flight_.end()) return it->second;
  Job job{key, std::move(request), {}};
  std::shared_future<NativeBuildResult> future = job.promise.get_future().share();
  in_flight_[key] = future;
  queue_.push_back(std::move(job));
  cv_.notify_one();
  return future;
}

void CompileFarm::Work() {
  while (true) {
    Job job;
    {
      std::unique_lock lock(mu_);
      cv_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stopping, and nothing left to build
      job = std::move(queue_.front());
      queue_.pop_front();
    }
    NativeBuildResult result;
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

}  // namespace kforge::compile
