// A thin RAII layer over the sqlite3 C API: one connection, prepared
// statements with sequential binding, and SQLite result codes turned into
// Error values that name the database file.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "common/result.h"

struct sqlite3;
struct sqlite3_stmt;

namespace kforge::sqlite {

class Statement {
 public:
  Statement(sqlite3_stmt* stmt, std::string path, int64_t busy_timeout_ms);
  Statement(Statement&& other) noexcept;
  Statement& operator=(Statement&&) = delete;
  Statement(const Statement&) = delete;
  ~Statement();

  // Binds the next parameter (left to right).
  Statement& Bind(std::string_view text);
  Statement& Bind(const char* text) { return Bind(std::string_view(text)); }
  Statement& Bind(const std::string& text) { return Bind(std::string_view(text)); }
  Statement& Bind(int64_t value);
  Statement& Bind(int value) { return Bind(static_cast<int64_t>(value)); }
  Statement& Bind(double value);
  Statement& Bind(const std::optional<int64_t>& value);
  Statement& Bind(const std::optional<double>& value);
  Statement& BindNull();
  // Empty text binds NULL (for optional references such as a foreign key).
  Statement& BindTextOrNull(const std::string& text);

  // One step: true when a row is ready, false when the statement is done.
  Result<bool> Step();
  // Steps to the end, ignoring rows.
  Status Run();

  bool IsNull(int col) const;
  std::string Text(int col) const;  // NULL reads as ""
  int64_t Int(int col) const;
  double Double(int col) const;
  std::optional<int64_t> OptInt(int col) const;
  std::optional<double> OptDouble(int col) const;

 private:
  sqlite3_stmt* stmt_;
  std::string path_;
  int64_t busy_timeout_ms_;
  int next_index_ = 1;
  int bind_rc_ = 0;  // first failed bind, reported by Step()
};

class Connection {
 public:
  Connection() = default;
  Connection(Connection&& other) noexcept;
  Connection& operator=(Connection&& other) noexcept;
  Connection(const Connection&) = delete;
  ~Connection();

  // flags: SQLITE_OPEN_* bits. Opening itself is lazy in SQLite; a corrupt
  // file shows up at the first statement.
  static Result<Connection> Open(const std::string& path, int flags, int64_t busy_timeout_ms);

  Result<Statement> Prepare(std::string_view sql);
  // Runs one or more statements that return no rows the caller needs.
  Status Exec(const std::string& sql);
  // The single text value of a one-row, one-column query (a PRAGMA, say).
  Result<std::string> QueryText(std::string_view sql);
  int64_t Changes() const;
  // False while a transaction is open.
  bool Autocommit() const;

  const std::string& path() const { return path_; }
  sqlite3* raw() const { return db_; }

 private:
  sqlite3* db_ = nullptr;
  std::string path_;
  int64_t busy_timeout_ms_ = 0;
};

// An Error for result code rc: corrupt or foreign files are kBadInput naming
// the path; a lock held past the busy timeout is kTimeout saying so.
Error ErrorFromCode(int rc, std::string_view detail, const std::string& path,
                    int64_t busy_timeout_ms);

}  // namespace kforge::sqlite
