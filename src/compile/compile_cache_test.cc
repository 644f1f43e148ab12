#include "compile/compile_cache.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <thread>

#include "common/files.h"

namespace kforge::compile {
namespace {

namespace fs = std::filesystem;

fs::path FreshDir(const std::string& name) {
  fs::path dir =
      fs::temp_directory_path() / ("kforge-cache-test-" + name + "-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  return dir;
}

// Builds an entry of `bytes` bytes in a staging directory and publishes it.
CacheEntry Put(CompileCache& cache, const std::string& key, size_t bytes) {
  auto staging = cache.StagingDir();
  EXPECT_TRUE(staging.ok());
  EXPECT_TRUE(WriteFileAtomic(*staging / "kernel.so", std::string(bytes, 'x')).ok());
  auto entry = cache.Publish(key, *staging);
  EXPECT_TRUE(entry.ok()) << (entry.ok() ? "" : entry.error().message);
  return *entry;
}

std::string Key(char c) {
  return std::string(64, c);
}

TEST(CacheKeyTest, EveryPartChangesTheKey) {
  CacheKeyParts base{"src", "nvcc 13.0", {"-O3", "-arch"}, "sm_90a", 1};
  std::string k = CacheKey(base);
  EXPECT_EQ(k.size(), 64u);
  EXPECT_EQ(k, CacheKey(base));
  auto changed = [&](auto edit) {
    CacheKeyParts p = base;
    edit(p);
    return CacheKey(p);
  };
  EXPECT_NE(k, changed([](CacheKeyParts& p) { p.source += " "; }));
  EXPECT_NE(k, changed([](CacheKeyParts& p) { p.compiler_version = "nvcc 12.8"; }));
  EXPECT_NE(k, changed([](CacheKeyParts& p) { p.flags.push_back("-G"); }));
  EXPECT_NE(k, changed([](CacheKeyParts& p) { p.arch = "sm_80"; }));
  EXPECT_NE(k, changed([](CacheKeyParts& p) { p.abi_version = 2; }));
  // Length prefixes: moving text between neighbouring parts changes the key.
  EXPECT_NE(CacheKey({"ab", "c", {}, "", 0}), CacheKey({"a", "bc", {}, "", 0}));
  EXPECT_NE(CacheKey({"", "", {"-a", "-b"}, "", 0}), CacheKey({"", "", {"-a -b"}, "", 0}));
}

TEST(CompileCacheTest, MissThenHit) {
  fs::path root = FreshDir("hit");
  auto cache = CompileCache::Open(root, 0);
  ASSERT_TRUE(cache.ok());
  EXPECT_FALSE(cache->Lookup(Key('a')).has_value());
  CacheEntry put = Put(*cache, Key('a'), 10);
  auto hit = cache->Lookup(Key('a'));
  ASSERT_TRUE(hit.has_value());
  EXPECT_EQ(hit->dir, put.dir);
  EXPECT_TRUE(fs::exists(hit->dir / "kernel.so"));
  EXPECT_FALSE(cache->Lookup("not-a-key").has_value());
  // A second publication of the same key keeps the first entry.
  auto staging = cache->StagingDir();
  ASSERT_TRUE(WriteFileAtomic(*staging / "kernel.so", "other").ok());
  auto again = cache->Publish(Key('a'), *staging);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*ReadFile(again->dir / "kernel.so"), std::string(10, 'x'));
  EXPECT_FALSE(fs::exists(*staging));
  fs::remove_all(root);
}

TEST(CompileCacheTest, EvictsLeastRecentlyUsedDownToTheCap) {
  fs::path root = FreshDir("evict");
  auto cache = CompileCache::Open(root, 2500);
  ASSERT_TRUE(cache.ok());
  Put(*cache, Key('a'), 1000);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  Put(*cache, Key('b'), 1000);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  ASSERT_TRUE(cache->Lookup(Key('a')).has_value());  // a is now more recent than b
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  Put(*cache, Key('c'), 1000);  // 3000 > 2500: the least recently used (b) goes
  EXPECT_TRUE(cache->Lookup(Key('a')).has_value());
  EXPECT_FALSE(cache->Lookup(Key('b')).has_value());
  EXPECT_TRUE(cache->Lookup(Key('c')).has_value());
  EXPECT_LE(cache->TotalBytes(), 2500u);
  // An entry larger than the cap on its own stays (it was just built) and
  // pushes out everything else.
  Put(*cache, Key('d'), 4000);
  EXPECT_TRUE(cache->Lookup(Key('d')).has_value());
  EXPECT_FALSE(cache->Lookup(Key('a')).has_value());
  EXPECT_FALSE(cache->Lookup(Key('c')).has_value());
  fs::remove_all(root);
}

TEST(CompileCacheTest, UnwritableRootIsBadInput) {
  auto cache = CompileCache::Open("/proc/kforge-no-such-dir/cache", 0);
  ASSERT_FALSE(cache.ok());
  EXPECT_EQ(cache.error().kind, ErrorKind::kBadInput);
}

}  // namespace
}  // namespace kforge::compile
