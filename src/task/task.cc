#include "task/task.h"

#include <fmt/format.h>

#include <algorithm>
#include <regex>
#include <sstream>

#include "common/files.h"
#include "common/hash.h"

namespace kforge {

namespace fs = std::filesystem;

namespace {

int LevelFromPath(const fs::path& p) {
  static const std::regex kLevel("level([0-9]+)");
  std::smatch m;
  std::string s = p.parent_path().filename().string();
  if (std::regex_match(s, m, kLevel)) return std::stoi(m[1]);
  return 0;
}

long ProblemNumber(const std::string& stem) {
  size_t i = 0;
  while (i < stem.size() && std::isdigit(static_cast<unsigned char>(stem[i]))) ++i;
  return i == 0 ? 1L << 30 : std::stol(stem.substr(0, i));
}

}  // namespace

Result<Task> LoadTaskFile(const fs::path& path) {
  std::error_code ec;
  if (!fs::exists(path, ec)) {
    return Error::BadInput(fmt::format("task file not found: {}", path.string()));
  }
  if (path.extension() != ".py") {
    return Error::BadInput(fmt::format("task file must be a .py file: {}", path.string()));
  }
  auto source = ReadFile(path);
  if (!source) return Error::BadInput(source.error().message);
  Task t;
  t.path = fs::absolute(path).lexically_normal();
  t.name = path.stem().string();
  t.source = std::move(source).value();
  t.sha256 = Sha256Hex(t.source);
  t.level = LevelFromPath(t.path);
  return t;
}

Result<std::vector<fs::path>> SuitePaths(const fs::path& dir_or_list) {
  std::error_code ec;
  std::vector<fs::path> paths;
  if (fs::is_directory(dir_or_list, ec)) {
    for (auto it = fs::recursive_directory_iterator(dir_or_list, ec);
         it != fs::recursive_directory_iterator(); it.increment(ec)) {
      if (ec) break;
      const fs::path& p = it->path();
      if (it->is_regular_file() && p.extension() == ".py" && p.filename() != "__init__.py") {
        paths.push_back(p);
      }
    }
    return paths;
  }
  if (!fs::is_regular_file(dir_or_list, ec)) {
    return Error::BadInput(fmt::format("suite not found: {}", dir_or_list.string()));
  }
  auto text = ReadFile(dir_or_list);
  if (!text) return Error::BadInput(text.error().message);
  std::istringstream in(*text);
  std::string line;
  while (std::getline(in, line)) {
    auto hash = line.find('#');
    if (hash != std::string::npos) line.resize(hash);
    line.erase(0, line.find_first_not_of(" \t\r"));
    line.erase(line.find_last_not_of(" \t\r") + 1);
    if (line.empty()) continue;
    fs::path p(line);
    paths.push_back(p.is_absolute() ? p : dir_or_list.parent_path() / p);
  }
  return paths;
}

Result<std::vector<Task>> LoadSuite(const fs::path& dir_or_list) {
  auto listed = SuitePaths(dir_or_list);
  if (!listed) return listed.error();
  const std::vector<fs::path>& paths = *listed;
  std::vector<Task> tasks;
  for (const auto& p : paths) {
    auto t = LoadTaskFile(p);
    if (!t) return t.error();
    tasks.push_back(std::move(t).value());
  }
  std::sort(tasks.begin(), tasks.end(), [](const Task& a, const Task& b) {
    if (a.level != b.level) return a.level < b.level;
    long na = ProblemNumber(a.name), nb = ProblemNumber(b.name);
    if (na != nb) return na < nb;
    return a.path < b.path;
  });
  if (tasks.empty()) {
    return Error::BadInput(fmt::format("suite {} holds no task files", dir_or_list.string()));
  }
  return tasks;
}

}  // namespace kforge
