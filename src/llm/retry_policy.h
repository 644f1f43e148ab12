// When and how long to wait before sending a failed request again:
// exponential back-off with jitter, or what the server asked for.
#pragma once

#include <cstdint>
#include <optional>
#include <random>
#include <string_view>

#include "llm/http_transport.h"

namespace kforge::llm {

struct RetryPolicy {
  int max_attempts = 6;          // attempts in all, the first included
  int64_t base_delay_ms = 1000;  // before the second attempt (before jitter)
  int64_t max_delay_ms = 60000;  // cap of the exponential back-off
  // Retry-After beyond this is clamped: a server asking for an hour would
  // otherwise stall a run that a budget or deadline should stop.
  int64_t max_retry_after_ms = 300000;

  // The wait before attempt `next_attempt` (2 for the first retry): the
  // server's Retry-After when it gave one, else min(max, base·2^(n-2))
  // scaled by a uniform factor in [0.5, 1] ("equal jitter"), so clients that
  // failed together do not retry together.
  int64_t DelayMs(int next_attempt, std::optional<double> retry_after_ms,
                  std::mt19937_64& rng) const;
};

// Retry-After (delta seconds, fractions accepted, or an HTTP date) and the
// retry-after-ms header some providers add; milliseconds, when present.
std::optional<double> RetryAfterMs(const HttpResponse& response);

// Whether an HTTP status is worth retrying: 408, 409, 425, 429 and 5xx
// (529 is Anthropic's "overloaded").
bool IsRetryableStatus(int status);

}  // namespace kforge::llm
