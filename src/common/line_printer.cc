#include "common/line_printer.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace kforge {

LinePrinter& LinePrinter::Get() {
  static LinePrinter printer;
  return printer;
}

LinePrinter::LinePrinter() {
  const char* term = std::getenv("TERM");
  smart_ = ::isatty(STDERR_FILENO) && term != nullptr && std::strcmp(term, "dumb") != 0 &&
           std::getenv("CI") == nullptr;
}

void LinePrinter::ClearStatusLocked() {
  if (status_shown_) {
    std::fputs("\r\x1b[K", stderr);
    status_shown_ = false;
  }
}

void LinePrinter::Line(const std::string& text) {
  if (quiet_) return;
  std::lock_guard lock(mu_);
  ClearStatusLocked();
  std::fprintf(stderr, "%s\n", text.c_str());
  std::fflush(stderr);
}

void LinePrinter::Warn(const std::string& text) {
  std::lock_guard lock(mu_);
  ClearStatusLocked();
  std::fprintf(stderr, "warning: %s\n", text.c_str());
  std::fflush(stderr);
}

void LinePrinter::Status(const std::string& text) {
  if (quiet_) return;
  std::lock_guard lock(mu_);
  if (smart_) {
    std::fprintf(stderr, "\r\x1b[K%s", text.c_str());
    status_shown_ = true;
  } else {
    std::fprintf(stderr, "%s\n", text.c_str());
  }
  std::fflush(stderr);
}

}  // namespace kforge
