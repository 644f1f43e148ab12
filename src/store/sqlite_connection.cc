#include "store/sqlite_connection.h"

#include <fmt/format.h>
#include <sqlite3.h>

#include <algorithm>
#include <cstdint>
#include <utility>

namespace kforge::sqlite {

Error ErrorFromCode(int rc, std::string_view detail, const std::string& path,
                    int64_t busy_timeout_ms) {
  switch (rc & 0xff) {
    case SQLITE_NOTADB:
      return Error::BadInput(
          fmt::format("{}: file is not a database (not an SQLite file, or encrypted)", path));
    case SQLITE_CORRUPT:
      return Error::BadInput(fmt::format(
          "{}: database disk image is malformed (restore it from a backup or start a new one)",
          path));
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
      return Error::Timeout(fmt::format(
          "{}: database is locked by another writer (waited {} ms; stop the other process "
          "or raise store.busy_timeout_ms)",
          path, busy_timeout_ms));
    case SQLITE_CANTOPEN:
      return Error::BadInput(fmt::format("cannot open database {}: {}", path, detail));
    case SQLITE_READONLY:
      return Error::Io(fmt::format("{}: database is read-only ({})", path, detail));
    case SQLITE_FULL:
    case SQLITE_IOERR:
      return Error::Io(fmt::format("{}: {}", path, detail));
    case SQLITE_CONSTRAINT:
      return Error::BadInput(fmt::format("{}: {}", path, detail));
    default:
      return Error::Internal(fmt::format("{}: sqlite error {}: {}", path, rc, detail));
  }
}

// --- Statement ---

Statement::Statement(sqlite3_stmt* stmt, std::string path, int64_t busy_timeout_ms)
    : stmt_(stmt), path_(std::move(path)), busy_timeout_ms_(busy_timeout_ms) {}

Statement::Statement(Statement&& other) noexcept
    : stmt_(std::exchange(other.stmt_, nullptr)),
      path_(std::move(other.path_)),
      busy_timeout_ms_(other.busy_timeout_ms_),
      next_index_(other.next_index_),
      bind_rc_(other.bind_rc_) {}

Statement::~Statement() {
  if (stmt_ != nullptr) sqlite3_finalize(stmt_);
}

namespace {
void KeepFirst(int& slot, int rc) {
  if (slot == SQLITE_OK && rc != SQLITE_OK) slot = rc;
}
}  // namespace

Statement& Statement::Bind(std::string_view text) {
  KeepFirst(bind_rc_, sqlite3_bind_text64(stmt_, next_index_++, text.data(), text.size(),
                                          SQLITE_TRANSIENT, SQLITE_UTF8));
  return *this;
}

Statement& Statement::Bind(int64_t value) {
  KeepFirst(bind_rc_, sqlite3_bind_int64(stmt_, next_index_++, value));
  return *this;
}

Statement& Statement::Bind(double value) {
  KeepFirst(bind_rc_, sqlite3_bind_double(stmt_, next_index_++, value));
  return *this;
}

Statement& Statement::Bind(const std::optional<int64_t>& value) {
  return value ? Bind(*value) : BindNull();
}

Statement& Statement::Bind(const std::optional<double>& value) {
  return value ? Bind(*value) : BindNull();
}

Statement& Statement::BindNull() {
  KeepFirst(bind_rc_, sqlite3_bind_null(stmt_, next_index_++));
  return *this;
}

Statement& Statement::BindTextOrNull(const std::string& text) {
  return text.empty() ? BindNull() : Bind(text);
}

Result<bool> Statement::Step() {
  if (bind_rc_ != SQLITE_OK) {
    return ErrorFromCode(bind_rc_, fmt::format("binding parameters: {}", sqlite3_errstr(bind_rc_)),
                         path_, busy_timeout_ms_);
  }
  int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  sqlite3* db = sqlite3_db_handle(stmt_);
  return ErrorFromCode(rc, sqlite3_errmsg(db), path_, busy_timeout_ms_);
}

Status Statement::Run() {
  while (true) {
    auto row = Step();
    if (!row.ok()) return row.error();
    if (!*row) return Status::Ok();
  }
}

bool Statement::IsNull(int col) const {
  return sqlite3_column_type(stmt_, col) == SQLITE_NULL;
}

std::string Statement::Text(int col) const {
  const unsigned char* p = sqlite3_column_text(stmt_, col);
  if (p == nullptr) return {};
  return std::string(reinterpret_cast<const char*>(p),
                     static_cast<size_t>(sqlite3_column_bytes(stmt_, col)));
}

int64_t Statement::Int(int col) const {
  return sqlite3_column_int64(stmt_, col);
}

double Statement::Double(int col) const {
  return sqlite3_column_double(stmt_, col);
}

std::optional<int64_t> Statement::OptInt(int col) const {
  if (IsNull(col)) return std::nullopt;
  return Int(col);
}

std::optional<double> Statement::OptDouble(int col) const {
  if (IsNull(col)) return std::nullopt;
  return Double(col);
}

// --- Connection ---

Connection::Connection(Connection&& other) noexcept
    : db_(std::exchange(other.db_, nullptr)),
      path_(std::move(other.path_)),
      busy_timeout_ms_(other.busy_timeout_ms_) {}

Connection& Connection::operator=(Connection&& other) noexcept {
  if (this != &other) {
    if (db_ != nullptr) sqlite3_close_v2(db_);
    db_ = std::exchange(other.db_, nullptr);
    path_ = std::move(other.path_);
    busy_timeout_ms_ = other.busy_timeout_ms_;
  }
  return *this;
}

Connection::~Connection() {
  if (db_ != nullptr) sqlite3_close_v2(db_);
}

Result<Connection> Connection::Open(const std::string& path, int flags, int64_t busy_timeout_ms) {
  Connection conn;
  conn.path_ = path;
  conn.busy_timeout_ms_ = busy_timeout_ms;
  int rc = sqlite3_open_v2(path.c_str(), &conn.db_, flags, nullptr);
  if (rc != SQLITE_OK) {
    std::string detail = conn.db_ != nullptr ? sqlite3_errmsg(conn.db_) : sqlite3_errstr(rc);
    return ErrorFromCode(rc, detail, path, busy_timeout_ms);
  }
  sqlite3_extended_result_codes(conn.db_, 1);
  int timeout = static_cast<int>(std::min<int64_t>(busy_timeout_ms, INT32_MAX));
  sqlite3_busy_timeout(conn.db_, timeout);
  return conn;
}

Result<Statement> Connection::Prepare(std::string_view sql) {
  sqlite3_stmt* stmt = nullptr;
  int rc = sqlite3_prepare_v2(db_, sql.data(), static_cast<int>(sql.size()), &stmt, nullptr);
  if (rc != SQLITE_OK) {
    if (stmt != nullptr) sqlite3_finalize(stmt);
    return ErrorFromCode(rc, sqlite3_errmsg(db_), path_, busy_timeout_ms_);
  }
  return Statement(stmt, path_, busy_timeout_ms_);
}

Status Connection::Exec(const std::string& sql) {
  char* message = nullptr;
  int rc = sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &message);
  if (rc == SQLITE_OK) return Status::Ok();
  std::string detail = message != nullptr ? message : sqlite3_errstr(rc);
  sqlite3_free(message);
  return ErrorFromCode(rc, detail, path_, busy_timeout_ms_);
}

Result<std::string> Connection::QueryText(std::string_view sql) {
  auto stmt = Prepare(sql);
  if (!stmt.ok()) return stmt.error();
  auto row = stmt->Step();
  if (!row.ok()) return row.error();
  if (!*row) return std::string();
  return stmt->Text(0);
}

int64_t Connection::Changes() const {
  return sqlite3_changes64(db_);
}

bool Connection::Autocommit() const {
  return sqlite3_get_autocommit(db_) != 0;
}

}  // namespace kforge::sqlite
