// LinePrinter owns the terminal's stderr: on a TTY a status line that is
// rewritten in place; elsewhere (CI logs, pipes) plain lines. Every module
// that wants to tell the user something goes through it, so output never
// interleaves mid-line.
#pragma once

#include <mutex>
#include <string>

namespace kforge {

class LinePrinter {
 public:
  static LinePrinter& Get();

  // A log line that stays.
  void Line(const std::string& text);
  // A status line: replaced by the next status on a TTY; printed plainly (and
  // rate-limited by the caller) elsewhere.
  void Status(const std::string& text);
  void Warn(const std::string& text);
  void set_quiet(bool q) { quiet_ = q; }
  bool smart_terminal() const { return smart_; }

 private:
  LinePrinter();
  void ClearStatusLocked();

  std::mutex mu_;
  bool smart_ = false;
  bool quiet_ = false;
  bool status_shown_ = false;
};

}  // namespace kforge
