// Opening the database for the run commands (optimize, resume, show, best,
// runs): --db PATH_OR_URL, else $KFORGE_DB, else ./kforge.db. A file that is
// not a kforge database, a damaged one, or one locked by another program is
// the user's to fix: kBadInput with one line naming it.
#pragma once

#include <memory>
#include <string>

#include "common/config.h"
#include "common/result.h"
#include "store/store.h"

namespace kforge::run {

constexpr const char* kDefaultDb = "kforge.db";
constexpr const char* kDbEnv = "KFORGE_DB";

// `create`: false for commands that only read (a missing file is kNotFound).
Result<std::unique_ptr<Store>> OpenRunStore(const std::string& path_or_url, bool create,
                                            const Config& config);

}  // namespace kforge::run
