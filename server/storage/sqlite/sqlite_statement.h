// A move-only prepared statement (after nix's libstore/sqlite.hh): prepare, bind,
// step, read columns, reset.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/status.h"
#include "server/storage/sqlite/sqlite_connection.h"

struct sqlite3_stmt;

namespace gemmprof::storage {

// One prepared statement of one Connection, finalized on destruction. Must not outlive
// its Connection. Not thread-safe (same rules as its Connection).
//
// Bind calls chain and remember the first failure, which the next Step / Run returns,
// so a statement reads as `stmt.Bind(1, id).Bind(2, name); RETURN_IF_ERROR(stmt.Run());`.
// Parameter indexes are 1-based, column indexes 0-based, as in SQLite.
class Statement {
 public:
  // Compiles `sql` (one statement). Errors: Internal with SQLite's message and the SQL.
  static absl::StatusOr<Statement> Prepare(Connection& conn, std::string_view sql);

  Statement(Statement&& other) noexcept;
  Statement& operator=(Statement&& other) noexcept;
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;
  ~Statement();

  Statement& Bind(int index, int64_t value);
  Statement& Bind(int index, int32_t value) { return Bind(index, static_cast<int64_t>(value)); }
  Statement& Bind(int index, bool value) { return Bind(index, static_cast<int64_t>(value)); }
  // SQLite stores a NaN as NULL.
  Statement& Bind(int index, double value);
  // The text is copied (SQLITE_TRANSIENT), so `value` may die before Step.
  Statement& Bind(int index, std::string_view value);
  Statement& Bind(int index, const char* value) { return Bind(index, std::string_view(value)); }
  Statement& Bind(int index, const std::string& value) {
    return Bind(index, std::string_view(value));
  }
  // NULL when `value` is empty.
  Statement& Bind(int index, const std::optional<int64_t>& value);
  Statement& BindNull(int index);

  // Advances to the next row: true when a row is ready to read, false when done.
  // Retries SQLITE_BUSY a few times after the connection's busy timeout.
  // Errors: the first failed Bind, or SqliteError naming the SQL.
  absl::StatusOr<bool> Step();
  // Steps until done, ignoring rows. For INSERT / UPDATE / DELETE.
  absl::Status Run();
  // Makes the statement runnable again and clears bindings and the remembered error.
  void Reset();

  int ColumnCount() const;
  bool ColumnIsNull(int column) const;
  int64_t ColumnInt64(int column) const;
  double ColumnDouble(int column) const;
  // "" for NULL.
  std::string ColumnText(int column) const;
  // std::nullopt for NULL.
  std::optional<int64_t> ColumnOptionalInt64(int column) const;

  std::string_view sql() const { return sql_; }

 private:
  Statement(sqlite3* db, sqlite3_stmt* stmt, std::string sql)
      : db_(db), stmt_(stmt), sql_(std::move(sql)) {}
  void RecordBind(int rc, int index);
  void Finalize();

  sqlite3* db_ = nullptr;
  sqlite3_stmt* stmt_ = nullptr;
  std::string sql_;
  absl::Status bind_status_;
};

}  // namespace gemmprof::storage
