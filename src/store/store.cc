#include "store/store.h"

#include <fmt/format.h>

#include <algorithm>

#include "store/sqlite_store.h"

namespace kforge {

namespace {

bool StartsWith(const std::string& s, std::string_view prefix) {
  return s.compare(0, prefix.size(), prefix) == 0;
}

}  // namespace

Result<std::unique_ptr<Store>> OpenStore(const std::string& path_or_url,
                                         const StoreOptions& options) {
  if (StartsWith(path_or_url, "postgresql://") || StartsWith(path_or_url, "postgres://")) {
    return Error::BadInput(fmt::format(
        "--db {}: the PostgreSQL store is not built yet; use an SQLite file path", path_or_url));
  }
  std::string path = path_or_url;
  if (StartsWith(path, "sqlite:")) {
    path = path.substr(7);
    // sqlite:///abs/file.db and sqlite://rel.db, as in the usual URL spelling.
    if (StartsWith(path, "//")) path = path.substr(2);
  } else if (path.find("://") != std::string::npos) {
    return Error::BadInput(
        fmt::format("--db {}: unknown database URL scheme (expected a file path, sqlite:PATH or "
                    "postgresql://...)",
                    path_or_url));
  }
  if (path.empty()) return Error::BadInput(fmt::format("--db '{}': no path given", path_or_url));
  auto store = SqliteStore::Open(path, options);
  if (!store.ok()) return store.error();
  return std::unique_ptr<Store>(std::move(store).value());
}

void RegisterStoreConfig(ConfigSchema& schema) {
  schema.Add({"store.busy_timeout_ms", ConfigValue(int64_t{5000}),
              "how long a database write waits for another process's lock before failing (ms)"});
}

StoreOptions StoreOptionsFromConfig(const Config& config) {
  StoreOptions options;
  options.busy_timeout_ms = std::max<int64_t>(0, config.GetInt("store.busy_timeout_ms"));
  return options;
}

}  // namespace kforge
