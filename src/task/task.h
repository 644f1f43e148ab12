// Task: one reference program (a KernelBench-style file with Model,
// get_inputs and get_init_inputs) and what kforge knows of it without running
// it. Running it (and so discovering a malformed task) is the reference
// harness process's job.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "common/result.h"

namespace kforge {

struct Task {
  std::string name;            // file stem, e.g. "19_ReLU"
  std::filesystem::path path;  // absolute
  std::string source;
  std::string sha256;  // of the source: the baseline cache key
  int level = 0;       // KernelBench level when the path says so, else 0
};

// One task file. Missing or unreadable files and non-.py paths are kBadInput.
Result<Task> LoadTaskFile(const std::filesystem::path& path);

// The paths a suite names, unloaded: a directory's *.py files (recursively,
// in directory order), or a list file's lines (# comments and blank lines
// dropped; relative paths against the list's dir). kBadInput when the suite
// is neither.
Result<std::vector<std::filesystem::path>> SuitePaths(const std::filesystem::path& dir_or_list);

// A suite: a directory searched recursively for *.py task files (sorted by
// level, then by the leading problem number, then by name), or a text file
// listing one path per line (# comments allowed; relative to the list's dir).
Result<std::vector<Task>> LoadSuite(const std::filesystem::path& dir_or_list);

}  // namespace kforge
