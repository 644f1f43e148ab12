#include "compile/compile_cache.h"

#include <fmt/format.h>

#include <algorithm>
#include <system_error>

#include "common/files.h"
#include "common/hash.h"

namespace kforge::compile {

namespace fs = std::filesystem;

namespace {

constexpr const char* kStagingDir = ".staging";
// Marks an entry's last use: its mtime is refreshed on every hit.
constexpr const char* kUsedMarker = ".used";

uint64_t DirBytes(const fs::path& dir) {
  uint64_t total = 0;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::end(it);
       it.increment(ec)) {
    if (it->is_regular_file(ec)) total += it->file_size(ec);
  }
  return total;
}

void Touch(const fs::path& marker) {
  std::error_code ec;
  if (!fs::exists(marker, ec)) {
    (void)WriteFileAtomic(marker, "");
  }
  fs::last_write_time(marker, fs::file_time_type::clock::now(), ec);
}

bool IsKey(const std::string& name) {
  return name.size() == 64 &&
         std::all_of(name.begin(), name.end(), [](char c) { return std::isxdigit(c) != 0; });
}

}  // namespace

std::string CacheKey(const CacheKeyParts& p) {
  std::string material;
  auto add = [&](const std::string& s) { material += fmt::format("{}:{};", s.size(), s); };
  add("kforge-compile-cache-v1");
  add(p.source);
  add(p.compiler_version);
  add(std::to_string(p.flags.size()));
  for (const std::string& f : p.flags) add(f);
  add(p.arch);
  add(std::to_string(p.abi_version));
  return Sha256Hex(material);
}

Result<CompileCache> CompileCache::Open(const fs::path& root, uint64_t max_bytes) {
  std::error_code ec;
  fs::create_directories(root / kStagingDir, ec);
  if (ec) {
    return Error::BadInput(
        fmt::format("cannot create the compile cache {}: {}", root.string(), ec.message()));
  }
  return CompileCache(root, max_bytes);
}

fs::path CompileCache::EntryDir(const std::string& key) const {
  return root_ / key.substr(0, 2) / key;
}

std::optional<CacheEntry> CompileCache::Lookup(const std::string& key) const {
  if (!IsKey(key)) return std::nullopt;
  fs::path dir = EntryDir(key);
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return std::nullopt;
  Touch(dir / kUsedMarker);
  return CacheEntry{key, dir};
}

Result<fs::path> CompileCache::StagingDir() const {
  return MakeTempDir(root_ / kStagingDir, "build-");
}

Result<CacheEntry> CompileCache::Publish(const std::string& key, const fs::path& built) const {
  if (!IsKey(key)) return Error::BadInput(fmt::format("not a cache key: '{}'", key));
  fs::path dir = EntryDir(key);
  std::error_code ec;
  fs::create_directories(dir.parent_path(), ec);
  if (ec) return Error::Internal(fmt::format("compile cache: {}", ec.message()));
  Touch(built / kUsedMarker);
  fs::rename(built, dir, ec);
  if (ec) {
    // Someone published this key first (rename onto a non-empty directory fails).
    if (fs::is_directory(dir)) {
      fs::remove_all(built, ec);
      Touch(dir / kUsedMarker);
      return CacheEntry{key, dir};
    }
    return Error::Internal(fmt::format("compile cache: cannot publish {}: {}", key, ec.message()));
  }
  Evict(key);
  return CacheEntry{key, dir};
}

uint64_t CompileCache::TotalBytes() const {
  uint64_t total = 0;
  std::error_code ec;
  for (const auto& shard : fs::directory_iterator(root_, ec)) {
    if (shard.path().filename() == kStagingDir || !shard.is_directory()) continue;
    for (const auto& entry : fs::directory_iterator(shard.path(), ec)) total += DirBytes(entry);
  }
  return total;
}

std::vector<std::string> CompileCache::Evict(const std::string& keep) const {
  std::vector<std::string> evicted;
  if (max_bytes_ == 0) return evicted;
  struct Item {
    fs::file_time_type used;
    std::string key;
    fs::path dir;
    uint64_t bytes;
  };
  std::vector<Item> items;
  uint64_t total = 0;
  std::error_code ec;
  for (const auto& shard : fs::directory_iterator(root_, ec)) {
    if (shard.path().filename() == kStagingDir || !shard.is_directory()) continue;
    for (const auto& entry : fs::directory_iterator(shard.path(), ec)) {
      std::string key = entry.path().filename().string();
      if (!IsKey(key)) continue;
      std::error_code tec;
      auto used = fs::last_write_time(entry.path() / kUsedMarker, tec);
      if (tec) used = fs::last_write_time(entry.path(), tec);
      uint64_t bytes = DirBytes(entry.path());
      total += bytes;
      items.push_back({used, key, entry.path(), bytes});
    }
  }
  if (total <= max_bytes_) return evicted;
  std::sort(items.begin(), items.end(), [](const Item& a, const Item& b) {
    return a.used != b.used ? a.used < b.used : a.key < b.key;
  });
  for (const Item& item : items) {
    if (total <= max_bytes_) break;
    if (item.key == keep) continue;
    std::error_code rec;
    fs::remove_all(item.dir, rec);
    if (rec) continue;
    total -= item.bytes;
    evicted.push_back(item.key);
  }
  return evicted;
}

}  // namespace kforge::compile
