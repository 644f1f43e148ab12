// A bounded multi-producer, multi-consumer queue between the HTTP thread and
// the evaluation workers. Full means "answer 503 now", never "block the
// thread that accepts connections".
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <mutex>
#include <optional>
#include <vector>

namespace kforge::serve {

template <class T>
class BoundedQueue {
 public:
  explicit BoundedQueue(size_t capacity) : capacity_(capacity) {}

  // False (and `item` untouched) when the queue is full or closed.
  bool TryPush(T& item) {
    {
      std::lock_guard lock(mu_);
      if (closed_ || items_.size() >= capacity_) return false;
      items_.push_back(std::move(item));
    }
    ready_.notify_one();
    return true;
  }

  // The oldest item; waits while the queue is empty and open. nullopt once
  // it is closed and empty.
  std::optional<T> Pop() {
    std::unique_lock lock(mu_);
    ready_.wait(lock, [this] { return closed_ || !items_.empty(); });
    if (items_.empty()) return std::nullopt;
    T item = std::move(items_.front());
    items_.pop_front();
    return item;
  }

  // Closes the queue and returns what was still waiting, so no consumer
  // starts on it; consumers then see nullopt.
  std::vector<T> CloseAndDrain() {
    std::vector<T> rest;
    {
      std::lock_guard lock(mu_);
      closed_ = true;
      for (T& item : items_) rest.push_back(std::move(item));
      items_.clear();
    }
    ready_.notify_all();
    return rest;
  }

  size_t size() const {
    std::lock_guard lock(mu_);
    return items_.size();
  }
  size_t capacity() const { return capacity_; }

 private:
  const size_t capacity_;
  mutable std::mutex mu_;
  std::condition_variable ready_;
  std::deque<T> items_;
  bool closed_ = false;
};

}  // namespace kforge::serve
