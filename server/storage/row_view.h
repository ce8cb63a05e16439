// One row of a query result, whichever database produced it, so the code that turns
// rows into core structs (store_rows.h) serves both backends.
#pragma once

#include <cstdint>
#include <string>

#include "server/storage/sqlite/sqlite_statement.h"

namespace gemmprof::storage {

// Column indexes are 0-based. Not thread-safe; valid while the row it reads is.
class RowView {
 public:
  virtual ~RowView() = default;
  virtual bool IsNull(int column) const = 0;
  // 0 for NULL.
  virtual int64_t Int64(int column) const = 0;
  // "" for NULL.
  virtual std::string Text(int column) const = 0;
};

// The current row of a SQLite statement.
class SqliteRow : public RowView {
 public:
  explicit SqliteRow(const Statement& stmt) : stmt_(stmt) {}
  bool IsNull(int column) const override { return stmt_.ColumnIsNull(column); }
  int64_t Int64(int column) const override { return stmt_.ColumnInt64(column); }
  std::string Text(int column) const override { return stmt_.ColumnText(column); }

 private:
  const Statement& stmt_;
};

}  // namespace gemmprof::storage
