#include "server/storage/open_store.h"

#include "server/storage/postgres/pg_store.h"
#include "server/storage/sqlite/sqlite_store.h"

namespace gemmprof::storage {

bool IsPostgresUri(std::string_view db) {
  return db.starts_with("postgresql://") || db.starts_with("postgres://");
}

absl::StatusOr<std::unique_ptr<ResultStore>> OpenResultStore(const std::string& db,
                                                             const StoreOptions& options) {
  if (IsPostgresUri(db)) {
    PgStore::Options pg;
    pg.node = options.node;
    pg.now_ms = options.now_ms;
    ASSIGN_OR_RETURN(auto store, PgStore::Open(db, std::move(pg)));
    return std::unique_ptr<ResultStore>(std::move(store));
  }
  SqliteStore::Options sqlite;
  sqlite.now_ms = options.now_ms;
  sqlite.fsync_each_commit = options.fsync_each_commit;
  sqlite.node = options.node;
  ASSIGN_OR_RETURN(auto store, SqliteStore::Open(db, std::move(sqlite)));
  return std::unique_ptr<ResultStore>(std::move(store));
}

}  // namespace gemmprof::storage
