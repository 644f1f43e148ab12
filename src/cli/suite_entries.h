// The tasks of a suite as `tasks scan` and `baseline` walk them: a directory
// (searched recursively), a text file listing task paths (one per line, `#`
// comments, relative to the list's folder), or a single .py file. A listed
// file that cannot be read is that entry's error, not the whole command's.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "task/task.h"

namespace kforge::cli {

struct SuiteEntry {
  std::filesystem::path path;
  std::optional<Task> task;
  std::string error;  // why `task` is empty
};

// A missing suite, an unreadable directory or list ends the command
// (OperationError, kBadInput).
std::vector<SuiteEntry> ReadSuite(const std::filesystem::path& suite);

}  // namespace kforge::cli
