#include "agent/agent_workspace.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <optional>

#include <algorithm>
#include <system_error>

#include "common/files.h"

namespace kforge::agent {

namespace fs = std::filesystem;

Result<fs::path> AgentWorkspace::Resolve(const std::string& path) const {
  if (path.empty()) return Error::BadInput("a path is required");
  fs::path p(path);
  if (p.is_absolute()) {
    return Error::BadInput(fmt::format("'{}': paths are relative to the workspace", path));
  }
  for (const auto& part : p) {
    if (part == "..") {
      return Error::BadInput(fmt::format("'{}': '..' leaves the workspace", path));
    }
  }
  fs::path full = root_ / p.lexically_normal();
  // No component may be a symlink: one could point anywhere.
  fs::path walk = root_;
  for (const auto& part : p.lexically_normal()) {
    walk /= part;
    std::error_code ec;
    if (fs::is_symlink(fs::symlink_status(walk, ec))) {
      return Error::BadInput(fmt::format("'{}': symlinks are not followed", path));
    }
  }
  return full;
}

Result<std::string> AgentWorkspace::Read(const std::string& path) const {
  auto full = Resolve(path);
  if (!full) return full.error();
  std::error_code ec;
  if (!fs::is_regular_file(*full, ec)) {
    return Error::BadInput(
        fmt::format("'{}' does not exist (files: {})", path, fmt::join(List(), ", ")));
  }
  if (fs::file_size(*full, ec) > kMaxWorkspaceFileBytes) {
    return Error::BadInput(
        fmt::format("'{}' is over {} bytes: too large to read", path, kMaxWorkspaceFileBytes));
  }
  return ReadFile(*full);
}

Status AgentWorkspace::Write(const std::string& path, const std::string& content) {
  auto full = Resolve(path);
  if (!full) return full.error();
  if (content.size() > kMaxWorkspaceFileBytes) {
    return Error::BadInput(fmt::format("'{}': {} bytes is over the {} a file may hold", path,
                                       content.size(), kMaxWorkspaceFileBytes));
  }
  std::error_code ec;
  if (!fs::exists(*full, ec) && List().size() >= kMaxWorkspaceFiles) {
    return Error::BadInput(fmt::format("the workspace holds {} files, its limit: edit one instead",
                                       kMaxWorkspaceFiles));
  }
  fs::create_directories(full->parent_path(), ec);
  return WriteFileAtomic(*full, content);
}

Status AgentWorkspace::Edit(const std::string& path, const std::string& old_text,
                            const std::string& new_text) {
  if (old_text.empty()) return Error::BadInput("old_text is empty: give the exact text to replace");
  auto text = Read(path);
  if (!text) return text.error();
  size_t at = text->find(old_text);
  if (at == std::string::npos) {
    return Error::BadInput(fmt::format("old_text does not occur in '{}'", path));
  }
  if (text->find(old_text, at + 1) != std::string::npos) {
    return Error::BadInput(
        fmt::format("old_text occurs more than once in '{}': include more context", path));
  }
  text->replace(at, old_text.size(), new_text);
  return Write(path, *text);
}

std::vector<std::string> AgentWorkspace::List() const {
  std::vector<std::string> out;
  std::error_code ec;
  for (fs::recursive_directory_iterator it(root_, ec), end; !ec && it != end; it.increment(ec)) {
    if (it->is_regular_file(ec) && !it->is_symlink(ec)) {
      out.push_back(fs::relative(it->path(), root_, ec).string());
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace kforge::agent
