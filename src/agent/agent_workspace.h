// AgentWorkspace: the per-candidate folder an agent's file tools work in
// (CUDA Agent's sandboxed workspace). Every path the model gives is relative
// to the root and must stay inside it: no absolute paths, no "..", no
// symlinks (a link could point outside). Sizes are bounded, so a model cannot
// fill the disk or the prompt.
#pragma once

#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

#include "common/result.h"

namespace kforge::agent {

inline constexpr size_t kMaxWorkspaceFileBytes = 256 * 1024;
inline constexpr size_t kMaxWorkspaceFiles = 32;

class AgentWorkspace {
 public:
  // The folder must exist; it is not created or removed here.
  explicit AgentWorkspace(std::filesystem::path root) : root_(std::move(root)) {}

  const std::filesystem::path& root() const { return root_; }

  // kBadInput for a path outside the workspace, a missing file, or one over
  // the size bound: the message is what the model is told.
  Result<std::string> Read(const std::string& path) const;
  Status Write(const std::string& path, const std::string& content);
  // Replaces the one occurrence of `old_text`; zero or several occurrences
  // are an error that says which, so the model can widen its excerpt.
  Status Edit(const std::string& path, const std::string& old_text, const std::string& new_text);
  // Relative paths of the regular files, sorted.
  std::vector<std::string> List() const;

 private:
  Result<std::filesystem::path> Resolve(const std::string& path) const;

  std::filesystem::path root_;
};

}  // namespace kforge::agent
