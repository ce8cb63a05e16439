#include "server/storage/sqlite/sqlite_transaction.h"

#include <utility>

namespace gemmprof::storage {

absl::StatusOr<Transaction> Transaction::Begin(Connection& conn) {
  RETURN_IF_ERROR(conn.Exec("BEGIN IMMEDIATE"));
  return Transaction(&conn);
}

Transaction::Transaction(Transaction&& other) noexcept
    : conn_(std::exchange(other.conn_, nullptr)) {}

Transaction::~Transaction() {
  // A failed rollback leaves SQLite to roll back when the connection closes; a
  // destructor cannot report it, and the work was not committed either way.
  if (conn_ != nullptr) (void)conn_->Exec("ROLLBACK");
}

absl::Status Transaction::Commit() {
  if (conn_ == nullptr) return absl::FailedPreconditionError("transaction is no longer active");
  RETURN_IF_ERROR(conn_->Exec("COMMIT"));
  conn_ = nullptr;
  return absl::OkStatus();
}

}  // namespace gemmprof::storage
