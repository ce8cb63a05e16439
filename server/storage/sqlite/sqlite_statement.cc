#include "server/storage/sqlite/sqlite_statement.h"

#include <sqlite3.h>

#include <chrono>
#include <thread>
#include <utility>

#include "absl/strings/str_cat.h"
#include "server/storage/absl_string_view.h"
#include "server/storage/sqlite/sqlite_error.h"

namespace gemmprof::storage {
namespace {

constexpr int kBusyRetries = 5;
constexpr std::chrono::milliseconds kBusyBackoff{50};

}  // namespace

absl::StatusOr<Statement> Statement::Prepare(Connection& conn, std::string_view sql) {
  sqlite3_stmt* stmt = nullptr;
  const int rc =
      sqlite3_prepare_v2(conn.get(), sql.data(), static_cast<int>(sql.size()), &stmt, nullptr);
  if (rc != SQLITE_OK) {
    sqlite3_finalize(stmt);
    return SqliteError(conn.get(), rc, "sqlite3_prepare_v2", sql);
  }
  if (stmt == nullptr) {
    // Only whitespace or comments: SQLite succeeds with no statement, which would
    // otherwise surface later as a confusing misuse error.
    return absl::InternalError(absl::StrCat("sqlite3_prepare_v2: empty statement: ", AbslSv(sql)));
  }
  return Statement(conn.get(), stmt, std::string(sql));
}

Statement::Statement(Statement&& other) noexcept
    : db_(std::exchange(other.db_, nullptr)),
      stmt_(std::exchange(other.stmt_, nullptr)),
      sql_(std::move(other.sql_)),
      bind_status_(std::move(other.bind_status_)) {}

Statement& Statement::operator=(Statement&& other) noexcept {
  if (this != &other) {
    Finalize();
    db_ = std::exchange(other.db_, nullptr);
    stmt_ = std::exchange(other.stmt_, nullptr);
    sql_ = std::move(other.sql_);
    bind_status_ = std::move(other.bind_status_);
  }
  return *this;
}

Statement::~Statement() { Finalize(); }

void Statement::Finalize() {
  // sqlite3_finalize repeats the last step's error, which Step already reported.
  if (stmt_ != nullptr) sqlite3_finalize(stmt_);
  stmt_ = nullptr;
}

void Statement::RecordBind(int rc, int index) {
  if (rc == SQLITE_OK || !bind_status_.ok()) return;
  bind_status_ = SqliteError(db_, rc, absl::StrCat("binding parameter ", index), sql_);
}

Statement& Statement::Bind(int index, int64_t value) {
  RecordBind(sqlite3_bind_int64(stmt_, index, value), index);
  return *this;
}

Statement& Statement::Bind(int index, double value) {
  RecordBind(sqlite3_bind_double(stmt_, index, value), index);
  return *this;
}

Statement& Statement::Bind(int index, std::string_view value) {
  RecordBind(
      sqlite3_bind_text64(stmt_, index, value.data(), value.size(), SQLITE_TRANSIENT, SQLITE_UTF8),
      index);
  return *this;
}

Statement& Statement::Bind(int index, const std::optional<int64_t>& value) {
  return value.has_value() ? Bind(index, *value) : BindNull(index);
}

Statement& Statement::BindNull(int index) {
  RecordBind(sqlite3_bind_null(stmt_, index), index);
  return *this;
}

absl::StatusOr<bool> Statement::Step() {
  RETURN_IF_ERROR(bind_status_);
  for (int attempt = 0;; ++attempt) {
    const int rc = sqlite3_step(stmt_);
    if (rc == SQLITE_ROW) return true;
    if (rc == SQLITE_DONE) return false;
    if ((rc & 0xff) == SQLITE_BUSY && attempt < kBusyRetries) {
      // A busy step must be reset before it can be retried.
      sqlite3_reset(stmt_);
      std::this_thread::sleep_for(kBusyBackoff * (attempt + 1));
      continue;
    }
    absl::Status status = SqliteError(db_, rc, "sqlite3_step", sql_);
    sqlite3_reset(stmt_);
    return status;
  }
}

absl::Status Statement::Run() {
  for (;;) {
    ASSIGN_OR_RETURN(bool row, Step());
    if (!row) return absl::OkStatus();
  }
}

void Statement::Reset() {
  // Both calls only repeat errors of an earlier step (already reported) or succeed.
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
  bind_status_ = absl::OkStatus();
}

int Statement::ColumnCount() const { return sqlite3_column_count(stmt_); }

bool Statement::ColumnIsNull(int column) const {
  return sqlite3_column_type(stmt_, column) == SQLITE_NULL;
}

int64_t Statement::ColumnInt64(int column) const { return sqlite3_column_int64(stmt_, column); }

double Statement::ColumnDouble(int column) const { return sqlite3_column_double(stmt_, column); }

std::string Statement::ColumnText(int column) const {
  const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(stmt_, column));
  if (text == nullptr) return {};
  return std::string(text, static_cast<size_t>(sqlite3_column_bytes(stmt_, column)));
}

std::optional<int64_t> Statement::ColumnOptionalInt64(int column) const {
  if (ColumnIsNull(column)) return std::nullopt;
  return ColumnInt64(column);
}

}  // namespace gemmprof::storage
