// Result<T>: expected errors travel as values; exceptions are reserved for the
// point where a whole operation ends (see docs/architecture.md).
#pragma once

#include <string>
#include <utility>
#include <variant>

namespace kforge {

enum class ErrorKind {
  kBadInput,  // the user's input is wrong: exit code 2
  kInternal,  // kforge itself failed: exit code 1
  kTimeout,   // an operation ran past its deadline
  kIo,        // a file, pipe or socket failed
  kNotFound,  // a named thing does not exist
};

struct Error {
  ErrorKind kind = ErrorKind::kInternal;
  std::string message;

  static Error BadInput(std::string m) { return {ErrorKind::kBadInput, std::move(m)}; }
  static Error Internal(std::string m) { return {ErrorKind::kInternal, std::move(m)}; }
  static Error Timeout(std::string m) { return {ErrorKind::kTimeout, std::move(m)}; }
  static Error Io(std::string m) { return {ErrorKind::kIo, std::move(m)}; }
  static Error NotFound(std::string m) { return {ErrorKind::kNotFound, std::move(m)}; }
};

// E is the error type: Error everywhere, llm::LlmError in the LLM layer
// (llm::LlmResult), whose errors carry retry hints.
template <class T, class E = Error>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}  // NOLINT: implicit by design
  Result(E error) : v_(std::move(error)) {}  // NOLINT

  bool ok() const { return std::holds_alternative<T>(v_); }
  explicit operator bool() const { return ok(); }
  T& value() & { return std::get<T>(v_); }
  const T& value() const& { return std::get<T>(v_); }
  T&& value() && { return std::get<T>(std::move(v_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  const E& error() const { return std::get<E>(v_); }

 private:
  std::variant<T, E> v_;
};

// Result<void> equivalent.
class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(Error error) : error_(std::move(error)), ok_(false) {}  // NOLINT
  static Status Ok() { return Status(); }
  bool ok() const { return ok_; }
  explicit operator bool() const { return ok_; }
  const Error& error() const { return error_; }

 private:
  Error error_;
  bool ok_ = true;
};

// Thrown only at the edge of an operation that cannot continue; the CLI maps
// it to exit code 2 (kBadInput) or 1 (everything else) with one line on stderr.
struct OperationError {
  Error error;
};

}  // namespace kforge
