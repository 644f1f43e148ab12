#include "common/files.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

namespace kforge {

namespace fs = std::filesystem;

Result<std::string> ReadFile(const fs::path& path) {
  std::error_code ec;
  if (!fs::exists(path, ec)) return Error::NotFound(fmt::format("no such file: {}", path.string()));
  if (fs::is_directory(path, ec)) {
    return Error::BadInput(fmt::format("expected a file, got a directory: {}", path.string()));
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return Error::Io(fmt::format("cannot read {}: {}", path.string(), std::strerror(errno)));
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

Status WriteFileAtomic(const fs::path& path, const std::string& contents) {
  fs::path tmp = path;
  tmp += fmt::format(".tmp.{}", ::getpid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) return Error::Io(fmt::format("cannot write {}", tmp.string()));
    out << contents;
    out.flush();
    if (!out) return Error::Io(fmt::format("write to {} failed", tmp.string()));
  }
  std::error_code ec;
  fs::rename(tmp, path, ec);
  if (ec) return Error::Io(fmt::format("rename {} failed: {}", path.string(), ec.message()));
  return {};
}

Result<fs::path> MakeTempDir(const fs::path& parent, const std::string& prefix) {
  std::error_code ec;
  fs::create_directories(parent, ec);
  std::string templ = (parent / (prefix + "XXXXXX")).string();
  if (::mkdtemp(templ.data()) == nullptr) {
    return Error::Io(fmt::format("mkdtemp {} failed: {}", templ, std::strerror(errno)));
  }
  return fs::path(templ);
}

fs::path CacheDir() {
  if (const char* d = std::getenv("KFORGE_CACHE_DIR"); d && *d) return d;
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) return fs::path(x) / "kforge";
  if (const char* h = std::getenv("HOME"); h && *h) return fs::path(h) / ".cache" / "kforge";
  return fs::temp_directory_path() / "kforge-cache";
}

}  // namespace kforge
