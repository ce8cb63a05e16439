// The store's schema and its history: an ordered list of migration steps, applied in
// one transaction when a database is opened. PRAGMA user_version holds the version.
#pragma once

#include <span>
#include <string_view>

#include "core/status.h"
#include "server/storage/sqlite/sqlite_connection.h"

namespace gemmprof::storage {

// One schema step: the SQL that takes a database from version `version - 1` to
// `version`. Steps are never edited once released; changes are new steps.
struct Migration {
  int version = 0;
  std::string_view description;
  std::string_view sql;
};

// Every step, in order; the last one's version is the current schema version.
std::span<const Migration> Migrations();
int LatestSchemaVersion();

// Reads PRAGMA user_version (0 for a new database). Errors: as SqliteError.
absl::StatusOr<int> SchemaVersion(Connection& conn);

// Applies the missing steps up to `target_version` in one transaction, so a failure
// leaves the database as it was. Errors: FailedPrecondition when the database is newer
// than `target_version` (written by a newer gemmprof), InvalidArgument for a target
// outside 1..LatestSchemaVersion(), database errors otherwise. Not thread-safe.
absl::Status Migrate(Connection& conn, int target_version);
inline absl::Status Migrate(Connection& conn) { return Migrate(conn, LatestSchemaVersion()); }

}  // namespace gemmprof::storage
