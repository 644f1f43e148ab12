#include "llm/retry_policy.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <ctime>

namespace kforge::llm {

int64_t RetryPolicy::DelayMs(int next_attempt, std::optional<double> retry_after_ms,
                             std::mt19937_64& rng) const {
  if (retry_after_ms) {
    double ms = std::clamp(*retry_after_ms, 0.0, static_cast<double>(max_retry_after_ms));
    return static_cast<int64_t>(std::ceil(ms));
  }
  int doublings = std::clamp(next_attempt - 2, 0, 30);
  double backoff = std::min(static_cast<double>(max_delay_ms),
                            static_cast<double>(base_delay_ms) * std::ldexp(1.0, doublings));
  std::uniform_real_distribution<double> jitter(0.5, 1.0);
  return static_cast<int64_t>(backoff * jitter(rng));
}

std::optional<double> RetryAfterMs(const HttpResponse& response) {
  if (auto ms = response.Header("retry-after-ms")) {
    char* end = nullptr;
    double v = std::strtod(ms->c_str(), &end);
    if (!ms->empty() && end == ms->c_str() + ms->size() && v >= 0) return v;
  }
  auto value = response.Header("retry-after");
  if (!value || value->empty()) return std::nullopt;
  char* end = nullptr;
  double seconds = std::strtod(value->c_str(), &end);
  if (end == value->c_str() + value->size()) {
    if (seconds < 0) return std::nullopt;
    return seconds * 1000.0;
  }
  // An HTTP date: "Wed, 21 Oct 2015 07:28:00 GMT".
  std::tm tm{};
  if (strptime(value->c_str(), "%a, %d %b %Y %H:%M:%S GMT", &tm) == nullptr) return std::nullopt;
  std::time_t when = timegm(&tm);
  double delta = std::difftime(when, std::time(nullptr));
  return std::max(0.0, delta) * 1000.0;
}

bool IsRetryableStatus(int status) {
  return status == 408 || status == 409 || status == 425 || status == 429 ||
         (status >= 500 && status <= 599);
}

}  // namespace kforge::llm
