// The PostgreSQL dialect of the store's schema (the same logical schema as
// migrations.h, whose version numbers it shares) and its migration runner.
#pragma once

#include <span>

#include "core/status.h"
#include "server/storage/postgres/pg_connection.h"
#include "server/storage/sqlite/migrations.h"

namespace gemmprof::storage {

// PostgreSQL's steps, in order. A PostgreSQL store starts at the schema SQLite reached
// in version 5, so its first step is version 5; the last step's version always equals
// LatestSchemaVersion().
std::span<const Migration> PgMigrations();

// Reads schema_version (0 for a database without the table).
absl::StatusOr<int> PgSchemaVersion(PgConnection& conn);

// Applies the missing steps in one transaction under an advisory lock, so daemons that
// start together on a new database migrate it once. Errors: FailedPrecondition when
// the database is newer than this gemmprof; connection and SQL errors otherwise.
absl::Status PgMigrate(PgConnection& conn);

}  // namespace gemmprof::storage
