// CompileCache: build outputs content-addressed by everything that decides
// them (source, compiler version, flags, target arch, ABI version), so a
// candidate the search proposes twice, or a rerun of a benchmark, never
// compiles twice. Entries live under ROOT/<key[0:2]>/<key>/ and are published
// by renaming a finished directory into place, so a reader never sees half an
// entry and several kforge processes can share one cache. The total size is
// capped: publishing evicts the least recently used entries (a hit refreshes
// an entry's use time) until the cache fits.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "common/result.h"

namespace kforge::compile {

struct CacheKeyParts {
  std::string source;
  std::string compiler_version;  // e.g. the first lines of `nvcc --version`
  std::vector<std::string> flags;
  std::string arch;  // e.g. sm_90a
  int abi_version = 0;
};

// SHA-256 (hex) over the parts, each length-prefixed so no two different
// part lists share a key.
std::string CacheKey(const CacheKeyParts& parts);

struct CacheEntry {
  std::string key;
  std::filesystem::path dir;  // holds the build outputs (e.g. kernel.so, build.log)
};

class CompileCache {
 public:
  static constexpr uint64_t kDefaultMaxBytes = 2ULL << 30;  // 2 GiB

  // Creates `root` if missing. max_bytes 0: no cap.
  static Result<CompileCache> Open(const std::filesystem::path& root, uint64_t max_bytes);

  // The entry for `key` (its use time refreshed), or nullopt on a miss.
  std::optional<CacheEntry> Lookup(const std::string& key) const;
  // A fresh private directory to build into, inside the cache's file system
  // (so Publish can rename it).
  Result<std::filesystem::path> StagingDir() const;
  // Moves a finished build directory into place as `key`'s entry, then evicts
  // down to the cap (never the entry just published). When another process
  // published the same key first, its entry wins and `built` is removed.
  Result<CacheEntry> Publish(const std::string& key, const std::filesystem::path& built) const;
  // Removes least recently used entries until the cache holds at most
  // max_bytes (keeping `keep`). Returns the keys evicted, oldest first.
  std::vector<std::string> Evict(const std::string& keep = {}) const;
  uint64_t TotalBytes() const;
  // Where `key`'s entry lives. For outputs that must be built in place (a
  // torch extension's build files hold their own paths), not published.
  std::filesystem::path EntryDir(const std::string& key) const;

  const std::filesystem::path& root() const { return root_; }
  uint64_t max_bytes() const { return max_bytes_; }

 private:
  CompileCache(std::filesystem::path root, uint64_t max_bytes)
      : root_(std::move(root)), max_bytes_(max_bytes) {}

  std::filesystem::path root_;
  uint64_t max_bytes_;
};

}  // namespace kforge::compile
