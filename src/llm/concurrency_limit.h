// A counting semaphore with a runtime limit (std::counting_semaphore fixes
// its maximum at compile time), shared by every client of one provider so a
// run never has more calls in flight there than the provider allows.
#pragma once

#include <condition_variable>
#include <mutex>

namespace kforge::llm {

class ConcurrencyLimit {
 public:
  explicit ConcurrencyLimit(int limit) : free_(limit > 0 ? limit : 1), limit_(free_) {}

  // Held for the duration of one HTTP attempt.
  class Permit {
   public:
    explicit Permit(ConcurrencyLimit* owner) : owner_(owner) {}
    Permit(Permit&& other) noexcept : owner_(other.owner_) { other.owner_ = nullptr; }
    Permit(const Permit&) = delete;
    Permit& operator=(const Permit&) = delete;
    Permit& operator=(Permit&&) = delete;
    ~Permit() {
      if (owner_ != nullptr) owner_->Release();
    }

   private:
    ConcurrencyLimit* owner_;
  };

  Permit Acquire() {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [this] { return free_ > 0; });
    --free_;
    return Permit(this);
  }
  int limit() const { return limit_; }
  int in_use() const {
    std::lock_guard<std::mutex> lock(mu_);
    return limit_ - free_;
  }

 private:
  void Release() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      ++free_;
    }
    cv_.notify_one();
  }

  mutable std::mutex mu_;
  std::condition_variable cv_;
  int free_;
  const int limit_;
};

}  // namespace kforge::llm
