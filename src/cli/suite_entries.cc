#include "cli/suite_entries.h"

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
  auto paths = SuitePaths(suite);
  if (!paths) throw OperationError{paths.error()};
  for (const fs::path& p : *paths) {
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
