// A move-only owner of one sqlite3 connection (after nix's libstore/sqlite.hh).
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

#include "core/status.h"

struct sqlite3;

namespace gemmprof::storage {

// One open database connection. Closed on destruction. Not thread-safe: one thread at
// a time (SqliteStore serializes access with a mutex).
class Connection {
 public:
  // How long SQLite's own busy handler waits for a lock held by another connection,
  // before a statement reports SQLITE_BUSY (which Statement then retries a few times).
  static constexpr std::chrono::milliseconds kBusyTimeout{5000};

  // Opens (creating if absent) the database at `path`; ":memory:" gives a private
  // in-memory database. Sets the busy timeout and turns on extended result codes.
  // Errors: Internal / Unavailable with SQLite's message when the file cannot be opened.
  static absl::StatusOr<Connection> Open(const std::string& path);

  Connection(Connection&& other) noexcept;
  Connection& operator=(Connection&& other) noexcept;
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;
  ~Connection();

  // Runs one or more statements that return no rows of interest (DDL, PRAGMA
  // settings), retrying on SQLITE_BUSY. A retry re-runs the whole text, so pass one
  // statement or idempotent ones. Errors: as SqliteError, naming the SQL.
  absl::Status Exec(std::string_view sql);

  // rowid of the last successful INSERT on this connection.
  int64_t LastInsertRowId() const;
  // Rows changed by the last INSERT / UPDATE / DELETE on this connection.
  int64_t Changes() const;
  // The raw handle, for Statement. Owned by this object.
  sqlite3* get() const { return db_; }
  const std::string& path() const { return path_; }

 private:
  Connection(sqlite3* db, std::string path) : db_(db), path_(std::move(path)) {}
  void Close();

  sqlite3* db_ = nullptr;
  std::string path_;
};

}  // namespace gemmprof::storage
