#include "llm/retry_policy.h"

#include <gtest/gtest.h>

#include <ctime>
#include <set>

namespace kforge::llm {
namespace {

TEST(RetryPolicy, BackOffDoublesWithJitterAndIsCapped) {
  RetryPolicy p;
  p.base_delay_ms = 100;
  p.max_delay_ms = 1000;
  std::mt19937_64 rng(1);
  for (int trial = 0; trial < 50; ++trial) {
    int64_t d2 = p.DelayMs(2, std::nullopt, rng);
    int64_t d3 = p.DelayMs(3, std::nullopt, rng);
    int64_t d4 = p.DelayMs(4, std::nullopt, rng);
    int64_t d10 = p.DelayMs(10, std::nullopt, rng);
    EXPECT_GE(d2, 50);
    EXPECT_LE(d2, 100);
    EXPECT_GE(d3, 100);
    EXPECT_LE(d3, 200);
    EXPECT_GE(d4, 200);
    EXPECT_LE(d4, 400);
    EXPECT_GE(d10, 500);
    EXPECT_LE(d10, 1000);
  }
}

TEST(RetryPolicy, JitterSpreadsDelays) {
  RetryPolicy p;
  p.base_delay_ms = 1000;
  std::mt19937_64 rng(7);
  std::set<int64_t> seen;
  for (int i = 0; i < 20; ++i) seen.insert(p.DelayMs(2, std::nullopt, rng));
  EXPECT_GT(seen.size(), 10u);
}

TEST(RetryPolicy, RetryAfterWinsAndIsClamped) {
  RetryPolicy p;
  p.max_retry_after_ms = 5000;
  std::mt19937_64 rng(1);
  EXPECT_EQ(p.DelayMs(2, 1500.0, rng), 1500);
  EXPECT_EQ(p.DelayMs(2, 0.0, rng), 0);
  EXPECT_EQ(p.DelayMs(2, 3600000.0, rng), 5000);
}

TEST(RetryPolicy, ParsesRetryAfterForms) {
  HttpResponse r;
  EXPECT_FALSE(RetryAfterMs(r).has_value());
  r.headers["retry-after"] = "2";
  EXPECT_DOUBLE_EQ(*RetryAfterMs(r), 2000.0);
  r.headers["retry-after"] = "0.25";
  EXPECT_DOUBLE_EQ(*RetryAfterMs(r), 250.0);
  r.headers["retry-after-ms"] = "40";  // more precise, preferred
  EXPECT_DOUBLE_EQ(*RetryAfterMs(r), 40.0);
  r.headers.erase("retry-after-ms");
  r.headers["retry-after"] = "soon";
  EXPECT_FALSE(RetryAfterMs(r).has_value());

  // An HTTP date about 30 s ahead.
  std::time_t when = std::time(nullptr) + 30;
  std::tm tm{};
  gmtime_r(&when, &tm);
  char buf[64];
  std::strftime(buf, sizeof(buf), "%a, %d %b %Y %H:%M:%S GMT", &tm);
  r.headers["retry-after"] = buf;
  auto ms = RetryAfterMs(r);
  ASSERT_TRUE(ms.has_value());
  EXPECT_GT(*ms, 25000.0);
  EXPECT_LE(*ms, 31000.0);
}

TEST(RetryPolicy, RetryableStatuses) {
  for (int s : {408, 409, 425, 429, 500, 502, 503, 504, 529})
    EXPECT_TRUE(IsRetryableStatus(s)) << s;
  for (int s : {200, 400, 401, 403, 404, 422}) EXPECT_FALSE(IsRetryableStatus(s)) << s;
}

}  // namespace
}  // namespace kforge::llm
