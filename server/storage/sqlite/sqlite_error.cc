#include "server/storage/sqlite/sqlite_error.h"

#include <sqlite3.h>

#include <string>

#include "absl/strings/str_cat.h"
#include "server/storage/absl_string_view.h"

namespace gemmprof::storage {

absl::Status SqliteError(sqlite3* db, int rc, std::string_view what, std::string_view sql) {
  std::string message = absl::StrCat(AbslSv(what), ": ", sqlite3_errstr(rc));
  // errmsg is often more specific than errstr ("no such column: foo"), but it belongs
  // to the connection and is only meaningful when it reports this same code.
  if (db != nullptr && sqlite3_extended_errcode(db) == rc) {
    absl::StrAppend(&message, " (", sqlite3_errmsg(db), ")");
  }
  if (!sql.empty()) absl::StrAppend(&message, " in statement: ", AbslSv(sql));
  switch (rc & 0xff) {
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
      return absl::UnavailableError(message);
    // A full disk is the store going away for a while, as a PostgreSQL restart is: a
    // running job waits for space (queue::JobExecutor's store retry) and nothing is lost.
    case SQLITE_FULL:
      return absl::UnavailableError(message);
    case SQLITE_CONSTRAINT:
      return absl::FailedPreconditionError(message);
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB:
      return absl::DataLossError(message);
    default:
      return absl::InternalError(message);
  }
}

}  // namespace gemmprof::storage
