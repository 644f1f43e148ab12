#include "cli/suite_entries.h"

#include <sstream>

#include "common/files.h"
#include "common/result.h"

namespace kforge::cli {

namespace fs = std::filesystem;

// A directory goes through LoadSuite; a list file is read line by line here
// so that one unreadable path is that entry's error, not the whole scan's;
// a single .py file is a suite of one.
std::vector<SuiteEntry> ReadSuite(const fs::path& suite) {
  std::error_code ec;
  std::vector<SuiteEntry> entries;
  if (!fs::is_regular_file(suite, ec)) {
    auto tasks = LoadSuite(suite);
    if (!tasks) throw OperationError{tasks.error()};
    for (auto& t : *tasks) entries.push_back({t.path, std::move(t), ""});
    return entries;
  }
  if (suite.extension() == ".py") {  // one task file: a suite of one
    auto t = LoadTaskFile(suite);
    if (!t) throw OperationError{t.error()};
    entries.push_back({suite, std::move(t).value(), ""});
    return entries;
  }
  auto text = ReadFile(suite);
  if (!text) throw OperationError{Error::BadInput(text.error().message)};
  std::istringstream in(*text);
  std::string line;
  while (std::getline(in, line)) {
    auto hash = line.find('#');
    if (hash != std::string::npos) line.resize(hash);
    line.erase(0, line.find_first_not_of(" \t\r"));
    line.erase(line.find_last_not_of(" \t\r") + 1);
    if (line.empty()) continue;
    fs::path p(line);
    if (!p.is_absolute()) p = suite.parent_path() / p;
    auto t = LoadTaskFile(p);
    if (t) {
      entries.push_back({p, std::move(t).value(), ""});
    } else {
      entries.push_back({p, std::nullopt, t.error().message});
    }
  }
  return entries;
}

}  // namespace kforge::cli
