// A write transaction that rolls back unless committed (after nix's libstore/sqlite.hh).
#pragma once

#include "core/status.h"
#include "server/storage/sqlite/sqlite_connection.h"

namespace gemmprof::storage {

// BEGIN IMMEDIATE on construction: the write lock is taken up front, so a busy
// database is reported (and retried) at Begin, never half-way through the work.
// Rolled back on destruction unless Commit() succeeded. Move-only; must not outlive
// its Connection; not thread-safe.
class Transaction {
 public:
  // Errors: Unavailable when the lock stays busy, Internal otherwise.
  static absl::StatusOr<Transaction> Begin(Connection& conn);

  Transaction(Transaction&& other) noexcept;
  Transaction& operator=(Transaction&&) = delete;
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;
  ~Transaction();

  // Makes the work durable (as the connection's synchronous setting defines). After a
  // failed commit the destructor still rolls back. Errors: as SqliteError.
  absl::Status Commit();

 private:
  explicit Transaction(Connection* conn) : conn_(conn) {}

  Connection* conn_ = nullptr;  // null once committed, rolled back or moved from
};

}  // namespace gemmprof::storage
