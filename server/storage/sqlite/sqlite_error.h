// Turns SQLite result codes into absl::Status, with the library's error text and the
// statement that failed.
#pragma once

#include <string_view>

#include "core/status.h"

struct sqlite3;

namespace gemmprof::storage {

// Maps `rc` (a failing SQLite result code) to a status: SQLITE_BUSY / SQLITE_LOCKED and
// SQLITE_FULL (the disk is full) give Unavailable, SQLITE_CONSTRAINT gives FailedPrecondition,
// SQLITE_CORRUPT / SQLITE_NOTADB give DataLoss, everything else Internal. The message names `what`
// (the call), the SQL text when given, and sqlite3_errmsg(db) when `db` is not null. Thread-safety:
// reads the connection's last error, so call it on the thread that made the failing call.
absl::Status SqliteError(sqlite3* db, int rc, std::string_view what, std::string_view sql = {});

}  // namespace gemmprof::storage
