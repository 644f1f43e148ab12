// Where the Python harness lives and which interpreter runs it.
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace kforge {

// $KFORGE_PYTHON, else "python3".
std::string PythonExecutable();
// $KFORGE_HARNESS_DIR, else <dir of the kforge binary>/../harness, else the
// source tree's harness/ (for a build run in place).
std::filesystem::path HarnessDir();
// argv for `python -m kforge_harness.<module>`.
std::vector<std::string> HarnessArgv(const std::string& module);
// Environment the harness needs (PYTHONPATH, unbuffered output).
std::map<std::string, std::string> HarnessEnv();

}  // namespace kforge
