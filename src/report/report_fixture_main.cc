// Test-only tool: report_fixture_db PATH writes the synthetic report fixture
// (report_fixture.h) into a new store at PATH, for tests/scenario/test_report.py
// and bench/report/render_check.sh.
#include <cstdio>
#include <filesystem>

#include "report/report_fixture.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr,
                 "usage: report_fixture_db PATH (a database file that does not exist yet)\n");
    return 2;
  }
  std::error_code ec;
  if (std::filesystem::exists(argv[1], ec)) {
    std::fprintf(stderr, "report_fixture_db: %s already exists\n", argv[1]);
    return 2;
  }
  auto store = kforge::OpenStore(argv[1]);
  if (!store) {
    std::fprintf(stderr, "report_fixture_db: %s\n", store.error().message.c_str());
    return 1;
  }
  kforge::Status written = kforge::report::fixture::WriteFixture(**store);
  if (!written) {
    std::fprintf(stderr, "report_fixture_db: %s\n", written.error().message.c_str());
    return 1;
  }
  std::printf("%s\n", argv[1]);
  return 0;
}
