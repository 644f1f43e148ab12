// The Store contract suite: every backend instantiates it with its own
// factory (see sqlite_store_test.cc), so a PostgreSQL store is held to exactly
// the same behaviour as the SQLite one.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <memory>
#include <ostream>
#include <string>

#include "store/store.h"

namespace kforge::store_testing {

struct StoreBackend {
  std::string name;
  // A fresh, empty database location for one test (a file under `scratch` for
  // SQLite; a new schema or database for a server backend).
  std::string (*new_location)(const std::filesystem::path& scratch);
  // Opens the store at `location`; the test fails when it cannot.
  std::unique_ptr<Store> (*make_store)(const std::string& location);
};

class StoreContractTest : public ::testing::TestWithParam<StoreBackend> {
 protected:
  void SetUp() override;
  void TearDown() override;

  // Closes the current store (every queued write lands) and opens it again.
  void Reopen();
  std::unique_ptr<Store> MakeStore() { return GetParam().make_store(location_); }

  std::filesystem::path scratch_;
  std::string location_;
  std::unique_ptr<Store> store_;
};

inline void PrintTo(const StoreBackend& backend, std::ostream* os) {
  *os << backend.name;
}

std::string BackendName(const ::testing::TestParamInfo<StoreBackend>& info);

}  // namespace kforge::store_testing
