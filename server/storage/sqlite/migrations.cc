#include "server/storage/sqlite/migrations.h"

#include <array>

#include "absl/strings/str_cat.h"
#include "server/storage/sqlite/sqlite_statement.h"
#include "server/storage/sqlite/sqlite_transaction.h"

namespace gemmprof::storage {
namespace {

// Version 1: jobs, their items and the results they produced.
// Enum columns hold core::ToString text, so the database reads well in the sqlite3 shell.
constexpr std::string_view kV1 = R"sql(
CREATE TABLE jobs (
  id           INTEGER PRIMARY KEY AUTOINCREMENT,
  state        TEXT    NOT NULL,
  error        TEXT    NOT NULL DEFAULT '',
  created_ms   INTEGER NOT NULL,
  started_ms   INTEGER NOT NULL DEFAULT 0,
  finished_ms  INTEGER NOT NULL DEFAULT 0,
  spec_json    TEXT    NOT NULL,
  plan_json    TEXT    NOT NULL,
  device_json  TEXT    NOT NULL
);
CREATE INDEX jobs_by_state ON jobs(state, id);

CREATE TABLE items (
  id                INTEGER PRIMARY KEY AUTOINCREMENT,
  job_id            INTEGER NOT NULL REFERENCES jobs(id) ON DELETE CASCADE,
  seq               INTEGER NOT NULL,
  op_name           TEXT    NOT NULL,
  pass              TEXT    NOT NULL,
  m                 INTEGER NOT NULL,
  k                 INTEGER NOT NULL,
  n                 INTEGER NOT NULL,
  groups            INTEGER NOT NULL,
  layers            INTEGER NOT NULL,
  per_layer         INTEGER NOT NULL,
  recipe            TEXT    NOT NULL,
  mode              TEXT    NOT NULL,
  status            TEXT    NOT NULL,
  error             TEXT    NOT NULL DEFAULT '',
  cached            INTEGER NOT NULL DEFAULT 0,
  result_id         INTEGER REFERENCES results(id),
  cached_result_id  INTEGER REFERENCES results(id),
  measured_ms       INTEGER NOT NULL DEFAULT 0,
  UNIQUE (job_id, seq)
);
CREATE INDEX items_by_status ON items(status);

CREATE TABLE results (
  id                INTEGER PRIMARY KEY AUTOINCREMENT,
  job_id            INTEGER NOT NULL REFERENCES jobs(id),
  item_id           INTEGER NOT NULL REFERENCES items(id),
  measured_ms       INTEGER NOT NULL,
  device_name       TEXT    NOT NULL,
  device_sm         INTEGER NOT NULL,
  driver_version    TEXT    NOT NULL,
  cublaslt_version  TEXT    NOT NULL,
  device_json       TEXT    NOT NULL,
  m                 INTEGER NOT NULL,
  k                 INTEGER NOT NULL,
  n                 INTEGER NOT NULL,
  pass              TEXT    NOT NULL,
  recipe            TEXT    NOT NULL,
  mode              TEXT    NOT NULL,
  groups            INTEGER NOT NULL,
  timing_json       TEXT    NOT NULL,
  measurement_json  TEXT    NOT NULL,
  cache_key         TEXT    NOT NULL
);
CREATE INDEX results_by_cache_key ON results(cache_key);
)sql";

// Version 2: history queries for dashboards. The median is copied out of the
// measurement JSON into a column so it can be filtered and sorted on without parsing.
constexpr std::string_view kV2 = R"sql(
CREATE INDEX results_by_shape ON results(recipe, pass, mode, m, k, n);
CREATE INDEX results_by_mkn ON results(m, k, n);
CREATE INDEX results_by_measured ON results(measured_ms);
CREATE INDEX results_by_device ON results(device_name);
ALTER TABLE results ADD COLUMN median_ms REAL NOT NULL DEFAULT 0;
UPDATE results SET median_ms = coalesce(json_extract(measurement_json, '$.time.median_ms'), 0);
)sql";

// Version 3: a job's item counts (finished, failed) read the index alone.
constexpr std::string_view kV3 = R"sql(
CREATE INDEX items_by_job_status ON items(job_id, status);
)sql";

// Version 4: who submitted a job (the token's name); rows from before read as ''.
constexpr std::string_view kV4 = R"sql(
ALTER TABLE jobs ADD COLUMN submitted_by TEXT NOT NULL DEFAULT '';
)sql";

// Version 5: the cluster schema. Jobs and results record the node (gemmprofd --node)
// that accepted / measured them, results the GPU's uuid. Device and timing context move
// out of every result row into `contexts`, one row per distinct JSON text: a result then
// costs only its own measurement. Rows from before read as node '' with their old
// context; their device_uuid is taken from the device JSON they kept.
constexpr std::string_view kV5 = R"sql(
ALTER TABLE jobs ADD COLUMN node TEXT NOT NULL DEFAULT '';
CREATE INDEX jobs_by_node ON jobs(node, id);
CREATE TABLE contexts (
  id    INTEGER PRIMARY KEY AUTOINCREMENT,
  kind  TEXT NOT NULL,
  json  TEXT NOT NULL,
  UNIQUE (kind, json)
);
INSERT INTO contexts (kind, json) SELECT DISTINCT 'device', device_json FROM results;
INSERT INTO contexts (kind, json) SELECT DISTINCT 'timing', timing_json FROM results;
ALTER TABLE results ADD COLUMN node TEXT NOT NULL DEFAULT '';
ALTER TABLE results ADD COLUMN device_uuid TEXT NOT NULL DEFAULT '';
ALTER TABLE results ADD COLUMN device_context_id INTEGER REFERENCES contexts(id);
ALTER TABLE results ADD COLUMN timing_context_id INTEGER REFERENCES contexts(id);
UPDATE results SET
  device_uuid = coalesce(json_extract(device_json, '$.uuid'), ''),
  device_context_id =
    (SELECT c.id FROM contexts c WHERE c.kind = 'device' AND c.json = results.device_json),
  timing_context_id =
    (SELECT c.id FROM contexts c WHERE c.kind = 'timing' AND c.json = results.timing_json);
ALTER TABLE results DROP COLUMN device_json;
ALTER TABLE results DROP COLUMN timing_json;
CREATE INDEX results_by_node ON results(node);
)sql";

// Version 6: routed experts. An item's per-group tokens, comma-separated ('' when every
// group runs the whole shape), and how its experts reach the kernel (core::MoeLayout).
// Items from before read as '' and 'contiguous', what they ran.
constexpr std::string_view kV6 = R"sql(
ALTER TABLE items ADD COLUMN group_tokens TEXT NOT NULL DEFAULT '';
ALTER TABLE items ADD COLUMN moe_layout TEXT NOT NULL DEFAULT 'contiguous';
)sql";

// Version 7: the daemons sharing the store (core/daemon_record.h), one row per node,
// written at start, at every heartbeat and at a clean stop.
constexpr std::string_view kV7 = R"sql(
CREATE TABLE daemons (
  node          TEXT    PRIMARY KEY,
  heartbeat_ms  INTEGER NOT NULL,
  record_json   TEXT    NOT NULL
);
)sql";

// Version 8: the cluster queue's batches and drain requests (PostgreSQL runs them; an
// embedded store keeps the same schema, its tables unused: one daemon owns its jobs).
constexpr std::string_view kV8 = R"sql(
CREATE TABLE cluster_batches (
  id              INTEGER PRIMARY KEY,
  job_id          INTEGER NOT NULL REFERENCES jobs(id),
  seq             INTEGER NOT NULL,
  item_ids        TEXT    NOT NULL,
  model           TEXT    NOT NULL,
  node            TEXT    NOT NULL DEFAULT '',
  submitted_by    TEXT    NOT NULL DEFAULT '',
  priority        INTEGER NOT NULL DEFAULT 0,
  state           TEXT    NOT NULL DEFAULT 'queued',
  owner           TEXT    NOT NULL DEFAULT '',
  lease_until_ms  INTEGER NOT NULL DEFAULT 0,
  attempts        INTEGER NOT NULL DEFAULT 0,
  expirations     INTEGER NOT NULL DEFAULT 0
);
ALTER TABLE daemons ADD COLUMN drain_requested_ms INTEGER NOT NULL DEFAULT 0;
)sql";

// Version 9: an item's own fast accumulation (core::WorkItem::fast_accum): 'on' or 'off' for
// a variant's item whose setting differs from the job's --fast-accum, 'default' (the job's)
// for every other item and every item from before.
constexpr std::string_view kV9 = R"sql(
ALTER TABLE items ADD COLUMN fast_accum TEXT NOT NULL DEFAULT 'default';
)sql";

constexpr std::array<Migration, 9> kMigrations{{
    {1, "jobs, items and results", kV1},
    {2, "history indexes and results.median_ms", kV2},
    {3, "items by job and status", kV3},
    {4, "jobs.submitted_by", kV4},
    {5, "nodes, device uuids, shared device and timing contexts", kV5},
    {6, "items.group_tokens and items.moe_layout", kV6},
    {7, "daemons", kV7},
    {8, "cluster_batches and daemons.drain_requested_ms", kV8},
    {9, "items.fast_accum", kV9},
}};

}  // namespace

std::span<const Migration> Migrations() { return kMigrations; }

int LatestSchemaVersion() { return kMigrations.back().version; }

absl::StatusOr<int> SchemaVersion(Connection& conn) {
  ASSIGN_OR_RETURN(Statement stmt, Statement::Prepare(conn, "PRAGMA user_version"));
  ASSIGN_OR_RETURN(bool row, stmt.Step());
  if (!row) return absl::InternalError("PRAGMA user_version returned no row");
  return static_cast<int>(stmt.ColumnInt64(0));
}

absl::Status Migrate(Connection& conn, int target_version) {
  if (target_version < 1 || target_version > LatestSchemaVersion()) {
    return absl::InvalidArgumentError(
        absl::StrCat("target_version: ", target_version, " is outside 1..", LatestSchemaVersion()));
  }
  // The version is read inside the transaction so two processes opening a new file at
  // once cannot both apply the same step.
  ASSIGN_OR_RETURN(Transaction txn, Transaction::Begin(conn));
  ASSIGN_OR_RETURN(int current, SchemaVersion(conn));
  if (current > target_version) {
    return absl::FailedPreconditionError(absl::StrCat(
        "database '", conn.path(), "' has schema version ", current,
        ", newer than the newest this gemmprof knows (", target_version,
        "); it was written by a newer gemmprof: upgrade gemmprof or use another --db"));
  }
  if (current == target_version) return absl::OkStatus();
  for (const Migration& step : kMigrations) {
    if (step.version <= current || step.version > target_version) continue;
    absl::Status status = conn.Exec(step.sql);
    if (!status.ok()) {
      return absl::Status(status.code(), absl::StrCat("migration to schema version ", step.version,
                                                      " failed: ", status.message()));
    }
    RETURN_IF_ERROR(conn.Exec(absl::StrCat("PRAGMA user_version = ", step.version)));
  }
  return txn.Commit();
}

}  // namespace gemmprof::storage
