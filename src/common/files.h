#pragma once

#include <filesystem>
#include <string>

#include "common/result.h"

namespace kforge {

Result<std::string> ReadFile(const std::filesystem::path& path);
// Writes to a temporary sibling and renames, so readers never see half a file.
Status WriteFileAtomic(const std::filesystem::path& path, const std::string& contents);
// A fresh private directory under `parent` (created if missing).
Result<std::filesystem::path> MakeTempDir(const std::filesystem::path& parent,
                                          const std::string& prefix);
// $KFORGE_CACHE_DIR, else $XDG_CACHE_HOME/kforge, else ~/.cache/kforge.
std::filesystem::path CacheDir();

}  // namespace kforge
