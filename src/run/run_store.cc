#include "run/run_store.h"

#include <fmt/format.h>

namespace kforge::run {

Result<std::unique_ptr<Store>> OpenRunStore(const std::string& path_or_url, bool create,
                                            const Config& config) {
  StoreOptions options = StoreOptionsFromConfig(config);
  options.create_if_missing = create;
  auto store = OpenStore(path_or_url, options);
  if (store) return store;
  Error e = store.error();
  if (e.kind == ErrorKind::kTimeout) {
    // Locked by another program for longer than the busy timeout.
    return Error::BadInput(fmt::format("database {}: {}", path_or_url, e.message));
  }
  if (e.kind == ErrorKind::kNotFound) {
    return Error::NotFound(
        fmt::format("no kforge database at {} (pass --db PATH or set {})", path_or_url, kDbEnv));
  }
  return e;
}

}  // namespace kforge::run
