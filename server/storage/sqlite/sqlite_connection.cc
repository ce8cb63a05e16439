#include "server/storage/sqlite/sqlite_connection.h"

#include <sqlite3.h>

#include <string>
#include <thread>
#include <utility>

#include "absl/strings/str_cat.h"
#include "server/storage/sqlite/sqlite_error.h"

namespace gemmprof::storage {
namespace {

// SQLite's busy handler already waited kBusyTimeout; these extra rounds cover the
// cases it does not (e.g. a WAL recovery in another process) without spinning forever.
constexpr int kBusyRetries = 5;
constexpr std::chrono::milliseconds kBusyBackoff{50};

}  // namespace

absl::StatusOr<Connection> Connection::Open(const std::string& path) {
  sqlite3* db = nullptr;
  // NOMUTEX: callers serialize access themselves, so SQLite's per-connection mutex
  // would only add cost.
  const int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX;
  const int rc = sqlite3_open_v2(path.c_str(), &db, flags, nullptr);
  if (rc != SQLITE_OK) {
    absl::Status status = SqliteError(db, rc, absl::StrCat("opening database '", path, "'"));
    // sqlite3_open_v2 allocates a handle even on failure; it must still be closed.
    sqlite3_close_v2(db);
    return status;
  }
  Connection conn(db, path);
  if (int rc2 = sqlite3_extended_result_codes(db, 1); rc2 != SQLITE_OK) {
    return SqliteError(db, rc2, "sqlite3_extended_result_codes");
  }
  if (int rc2 = sqlite3_busy_timeout(db, static_cast<int>(kBusyTimeout.count()));
      rc2 != SQLITE_OK) {
    return SqliteError(db, rc2, "sqlite3_busy_timeout");
  }
  return conn;
}

Connection::Connection(Connection&& other) noexcept
    : db_(std::exchange(other.db_, nullptr)), path_(std::move(other.path_)) {}

Connection& Connection::operator=(Connection&& other) noexcept {
  if (this != &other) {
    Close();
    db_ = std::exchange(other.db_, nullptr);
    path_ = std::move(other.path_);
  }
  return *this;
}

Connection::~Connection() { Close(); }

void Connection::Close() {
  // close_v2 defers the close until outstanding statements are finalized, so a
  // leaked Statement cannot make this fail; a destructor has nowhere to report to.
  if (db_ != nullptr) sqlite3_close_v2(db_);
  db_ = nullptr;
}

absl::Status Connection::Exec(std::string_view sql) {
  const std::string text(sql);
  for (int attempt = 0;; ++attempt) {
    char* errmsg = nullptr;
    const int rc = sqlite3_exec(db_, text.c_str(), nullptr, nullptr, &errmsg);
    sqlite3_free(errmsg);
    if (rc == SQLITE_OK) return absl::OkStatus();
    if ((rc & 0xff) == SQLITE_BUSY && attempt < kBusyRetries) {
      std::this_thread::sleep_for(kBusyBackoff * (attempt + 1));
      continue;
    }
    return SqliteError(db_, rc, "sqlite3_exec", sql);
  }
}

int64_t Connection::LastInsertRowId() const { return sqlite3_last_insert_rowid(db_); }

int64_t Connection::Changes() const { return sqlite3_changes64(db_); }

}  // namespace gemmprof::storage
