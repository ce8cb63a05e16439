// Opens the ResultStore that gemmprofd --db names: a SQLite file path (the embedded
// default) or a PostgreSQL connection URI (postgresql://USER@HOST:PORT/DB, the store a
// cluster of daemons shares).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "core/status.h"
#include "server/storage/result_store.h"

namespace gemmprof::storage {

struct StoreOptions {
  // This daemon's name (gemmprofd --node, default the host name), recorded with every
  // job it accepts and every result it measures.
  std::string node;
  // Wall clock in unix epoch milliseconds; tests replace it to control time.
  std::function<int64_t()> now_ms;
  // false: commits need not reach the disk before returning (benchmarks' throwaway
  // databases only).
  bool fsync_each_commit = true;
};

// Whether `db` is a PostgreSQL connection URI (postgresql:// or postgres://).
bool IsPostgresUri(std::string_view db);

// Opens (creating and migrating as needed) the store `db` names. The password of a
// PostgreSQL URI comes from PGPASSFILE / PGPASSWORD, never from the URI; errors never
// contain it. Errors: InvalidArgument for a malformed URI or a password inside it,
// Unavailable when the server cannot be reached, FailedPrecondition when the schema was
// written by a newer gemmprof, DataLoss / Internal for a damaged database.
absl::StatusOr<std::unique_ptr<ResultStore>> OpenResultStore(const std::string& db,
                                                             const StoreOptions& options);

}  // namespace gemmprof::storage
