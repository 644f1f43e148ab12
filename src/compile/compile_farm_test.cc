#include "compile/compile_farm.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>

namespace kforge::compile {
namespace {

using namespace std::chrono_literals;

TEST(CompileFarmTest, BuildsInParallelAndSharesIdenticalKeys) {
  std::atomic<int> running{0}, peak{0}, builds{0};
  CompileFarm farm(
      [&](const NativeBuildRequest& r) {
        int now = ++running;
        int seen = peak.load();
        while (now > seen && !peak.compare_exchange_weak(seen, now)) {
        }
        ++builds;
        std::this_thread::sleep_for(100ms);
        --running;
        NativeBuildResult result;
        result.ok = r.source != "bad";
        result.key = r.source;
        return result;
      },
      4);
  EXPECT_EQ(farm.workers(), 4);
  std::vector<std::shared_future<NativeBuildResult>> futures;
  for (int i = 0; i < 8; ++i) {
    std::string src = "k" + std::to_string(i);
    futures.push_back(farm.Submit(src, {src, "sm_90a", {}}));
  }
  auto dup = farm.Submit("k0", {"k0", "sm_90a", {}});  // queued or building: shared
  auto bad = farm.Submit("bad", {"bad", "sm_90a", {}});
  for (auto& f : futures) EXPECT_TRUE(f.get().ok);
  EXPECT_EQ(dup.get().key, "k0");
  EXPECT_FALSE(bad.get().ok);
  EXPECT_EQ(builds.load(), 9);
  EXPECT_GE(peak.load(), 2);  // builds overlapped
  EXPECT_LE(peak.load(), 4);  // never more than the pool
}

TEST(CompileFarmTest, AThrowingBuildIsAFailedResult) {
  CompileFarm farm(
      [](const NativeBuildRequest&) -> NativeBuildResult { throw std::runtime_error("disk full"); },
      1);
  NativeBuildResult r = farm.Submit("x", {}).get();
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.error.find("disk full"), std::string::npos);
}

TEST(CompileFarmTest, DestructionFinishesQueuedBuilds) {
  std::atomic<int> builds{0};
  std::vector<std::shared_future<NativeBuildResult>> futures;
  {
    CompileFarm farm(
        [&](const NativeBuildRequest&) {
          std::this_thread::sleep_for(10ms);
          ++builds;
          return NativeBuildResult{};
        },
        2);
    for (int i = 0; i < 6; ++i) futures.push_back(farm.Submit(std::to_string(i), {}));
  }
  EXPECT_EQ(builds.load(), 6);
  for (auto& f : futures) EXPECT_EQ(f.wait_for(0s), std::future_status::ready);
}

}  // namespace
}  // namespace kforge::compile
