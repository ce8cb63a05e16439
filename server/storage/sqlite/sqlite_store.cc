#include "server/storage/sqlite/sqlite_store.h"

#include <chrono>
#include <cmath>
#include <utility>
#include <variant>

#include "absl/strings/str_cat.h"
#include "server/storage/absl_string_view.h"
#include "server/storage/json_codec.h"
#include "server/storage/paging.h"
#include "server/storage/result_query.h"
#include "server/storage/sqlite/migrations.h"
#include "server/storage/sqlite/sqlite_statement.h"
#include "server/storage/sqlite/sqlite_transaction.h"
#include "server/storage/store_rows.h"
#include "server/storage/store_rules.h"

namespace gemmprof::storage {
namespace {

constexpr int32_t kMaxJobPageSize = 1000;

// RecoverUnfinished's scope: this node's jobs. Jobs from before nodes were recorded
// (node '') count as this node's: only a single-node SQLite file can hold them.
constexpr std::string_view kRequeueOwnItemsSql =
    "UPDATE items SET status = 'queued' WHERE status = 'running' AND job_id IN "
    "(SELECT id FROM jobs WHERE node = ?1 OR node = '')";
constexpr std::string_view kOwnUnfinishedJobsSql =
    "SELECT id FROM jobs WHERE state IN ('queued', 'running') AND (node = ?1 OR node = '') "
    "ORDER BY id";

// WAL lets readers of other processes (the sqlite3 shell, a backup) run beside the
// daemon's writes. synchronous=FULL rather than NORMAL: in WAL mode NORMAL is already
// safe against a kill -9, but a power loss could drop the last commits, i.e. a job
// whose SubmitJob was acknowledged or a result that was reported finished. The cost,
// one fsync per commit, is noise next to benchmarking a GEMM between commits.
constexpr std::string_view kPragmas = "PRAGMA journal_mode = WAL; PRAGMA foreign_keys = ON;";

int64_t SystemNowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

absl::StatusOr<Statement> PrepareItemInsert(Connection& conn) {
  return Statement::Prepare(
      conn,
      "INSERT INTO items (job_id, seq, op_name, pass, m, k, n, groups, layers, per_layer, "
      "recipe, mode, group_tokens, moe_layout, fast_accum, status) VALUES (?, ?, ?, ?, ?, ?, ?, "
      "?, ?, ?, ?, ?, ?, ?, ?, 'queued')");
}

absl::Status InsertItem(Statement& stmt, const core::WorkItem& item) {
  stmt.Reset();
  stmt.Bind(1, item.job_id)
      .Bind(2, item.seq)
      .Bind(3, item.op.name)
      .Bind(4, core::ToString(item.op.pass))
      .Bind(5, item.op.shape.m)
      .Bind(6, item.op.shape.k)
      .Bind(7, item.op.shape.n)
      .Bind(8, item.op.groups)
      .Bind(9, item.op.layers)
      .Bind(10, item.op.per_layer)
      .Bind(11, core::ToString(item.recipe))
      .Bind(12, core::ToString(item.mode))
      .Bind(13, GroupTokensText(item.op.group_tokens))
      .Bind(14, core::ToString(item.op.layout))
      .Bind(15, core::ToString(item.fast_accum));
  return stmt.Run();
}

// Reads an item's status; NotFound when there is no such item.
absl::StatusOr<core::ItemStatus> ItemStatusOf(Connection& conn, int64_t item_id) {
  ASSIGN_OR_RETURN(Statement stmt,
                   Statement::Prepare(conn, "SELECT status FROM items WHERE id = ?"));
  stmt.Bind(1, item_id);
  ASSIGN_OR_RETURN(bool row, stmt.Step());
  if (!row) return ItemNotFound(item_id);
  std::optional<core::ItemStatus> status = core::ParseItemStatus(stmt.ColumnText(0));
  if (!status.has_value()) {
    return absl::DataLossError(
        absl::StrCat("items.status: unknown value '", stmt.ColumnText(0), "' in row ", item_id));
  }
  return *status;
}

}  // namespace

absl::StatusOr<std::unique_ptr<SqliteStore>> SqliteStore::Open(const std::string& path) {
  return Open(path, Options{});
}

absl::StatusOr<std::unique_ptr<SqliteStore>> SqliteStore::Open(const std::string& path,
                                                               Options options) {
  ASSIGN_OR_RETURN(Connection conn, Connection::Open(path));
  // A file that is not a database opens fine; the first statement reports it, so the
  // path is added here where it is known.
  absl::Status status = conn.Exec(kPragmas);
  if (status.ok()) {
    status = conn.Exec(options.fsync_each_commit ? "PRAGMA synchronous = FULL"
                                                 : "PRAGMA synchronous = NORMAL");
  }
  if (!status.ok()) {
    return absl::Status(status.code(),
                        absl::StrCat("opening database '", path, "': ", status.message()));
  }
  RETURN_IF_ERROR(Migrate(conn));
  if (!options.now_ms) options.now_ms = SystemNowMs;
  return std::unique_ptr<SqliteStore>(new SqliteStore(std::move(conn), std::move(options)));
}

SqliteStore::SqliteStore(Connection conn, Options options)
    : conn_(std::move(conn)), options_(std::move(options)) {}

int64_t SqliteStore::NowMs() const { return options_.now_ms(); }

absl::StatusOr<core::JobRecord> SqliteStore::CreateJob(core::JobRecord job,
                                                       std::vector<core::WorkItem> items) {
  std::lock_guard<std::mutex> lock(mutex_);
  ASSIGN_OR_RETURN(Transaction txn, Transaction::Begin(conn_));
  {
    ASSIGN_OR_RETURN(
        Statement stmt,
        Statement::Prepare(conn_,
                           "INSERT INTO jobs (state, created_ms, spec_json, plan_json, "
                           "device_json, submitted_by, node) VALUES ('queued', ?, ?, ?, ?, "
                           "?, ?)"));
    stmt.Bind(1, job.created_ms != 0 ? job.created_ms : NowMs())
        .Bind(2, EncodeJobSpec(job.spec))
        .Bind(3, EncodePlan(job.plan))
        .Bind(4, EncodeDeviceInfo(job.device))
        .Bind(5, job.submitted_by)
        .Bind(6, options_.node);
    RETURN_IF_ERROR(stmt.Run());
  }
  const int64_t job_id = conn_.LastInsertRowId();
  ASSIGN_OR_RETURN(Statement insert, PrepareItemInsert(conn_));
  for (size_t i = 0; i < items.size(); ++i) {
    items[i].job_id = job_id;
    items[i].seq = static_cast<int32_t>(i);
    RETURN_IF_ERROR(InsertItem(insert, items[i]));
  }
  ASSIGN_OR_RETURN(core::JobRecord stored, GetJobLocked(job_id));
  RETURN_IF_ERROR(txn.Commit());
  return stored;
}

absl::StatusOr<core::JobRecord> SqliteStore::GetJob(int64_t job_id) {
  std::lock_guard<std::mutex> lock(mutex_);
  return GetJobLocked(job_id);
}

absl::StatusOr<core::JobRecord> SqliteStore::GetJobLocked(int64_t job_id) {
  ASSIGN_OR_RETURN(Statement stmt,
                   Statement::Prepare(conn_, absl::StrCat("SELECT ", AbslSv(kJobColumns),
                                                          " FROM jobs j WHERE j.id = ?")));
  stmt.Bind(1, job_id);
  ASSIGN_OR_RETURN(bool row, stmt.Step());
  if (!row) return JobNotFound(job_id);
  return ReadJobRow(SqliteRow(stmt));
}

absl::Status SqliteStore::RequireJobLocked(int64_t job_id) {
  ASSIGN_OR_RETURN(Statement stmt, Statement::Prepare(conn_, "SELECT 1 FROM jobs WHERE id = ?"));
  stmt.Bind(1, job_id);
  ASSIGN_OR_RETURN(bool row, stmt.Step());
  return row ? absl::OkStatus() : JobNotFound(job_id);
}

absl::StatusOr<Page<core::JobRecord>> SqliteStore::ListJobs(const JobFilter& filter) {
  RETURN_IF_ERROR(ValidatePageSize(filter.page_size, kMaxJobPageSize));
  ASSIGN_OR_RETURN(std::optional<int64_t> before_id, ParsePageToken(filter.page_token));
  std::string sql = absl::StrCat("SELECT ", AbslSv(kJobColumns), " FROM jobs j WHERE j.id < ?");
  if (filter.state.has_value()) absl::StrAppend(&sql, " AND j.state = ?");
  if (filter.node.has_value()) absl::StrAppend(&sql, " AND j.node = ?");
  if (filter.campaign.has_value()) {
    absl::StrAppend(&sql, " AND json_extract(j.spec_json, '$.campaign') = ?");
  }
  absl::StrAppend(&sql, " ORDER BY j.id DESC LIMIT ?");

  std::lock_guard<std::mutex> lock(mutex_);
  ASSIGN_OR_RETURN(Statement stmt, Statement::Prepare(conn_, sql));
  int index = 1;
  stmt.Bind(index++, before_id.value_or(INT64_MAX));
  if (filter.state.has_value()) stmt.Bind(index++, core::ToString(*filter.state));
  if (filter.node.has_value()) stmt.Bind(index++, *filter.node);
  if (filter.campaign.has_value()) stmt.Bind(index++, *filter.campaign);
  // One row more than asked tells whether a next page exists.
  stmt.Bind(index++, int64_t{filter.page_size} + 1);
  Page<core::JobRecord> page;
  for (;;) {
    ASSIGN_OR_RETURN(bool row, stmt.Step());
    if (!row) break;
    if (static_cast<int32_t>(page.items.size()) == filter.page_size) {
      page.next_page_token = MakePageToken(page.items.back().id);
      break;
    }
    ASSIGN_OR_RETURN(core::JobRecord job, ReadJobRow(SqliteRow(stmt)));
    page.items.push_back(std::move(job));
  }
  return page;
}

absl::StatusOr<std::vector<core::ItemRecord>> SqliteStore::GetItems(int64_t job_id) {
  std::lock_guard<std::mutex> lock(mutex_);
  RETURN_IF_ERROR(RequireJobLocked(job_id));
  ASSIGN_OR_RETURN(Statement stmt,
                   Statement::Prepare(conn_, absl::StrCat("SELECT ", AbslSv(kItemColumns),
                                                          " FROM items i LEFT JOIN results r ON "
                                                          "r.id = coalesce(i.result_id, "
                                                          "i.cached_result_id) WHERE i.job_id = ? "
                                                          "ORDER BY i.seq")));
  stmt.Bind(1, job_id);
  std::vector<core::ItemRecord> items;
  for (;;) {
    ASSIGN_OR_RETURN(bool row, stmt.Step());
    if (!row) break;
    ASSIGN_OR_RETURN(core::ItemRecord item, ReadItemRow(SqliteRow(stmt)));
    items.push_back(std::move(item));
  }
  return items;
}

absl::Status SqliteStore::SetJobState(int64_t job_id, core::JobState state,
                                      const std::string& error) {
  std::lock_guard<std::mutex> lock(mutex_);
  ASSIGN_OR_RETURN(Transaction txn, Transaction::Begin(conn_));
  ASSIGN_OR_RETURN(core::JobRecord job, GetJobLocked(job_id));
  if (core::IsTerminal(job.state)) {
    if (job.state == state) return absl::OkStatus();
    return absl::FailedPreconditionError(
        absl::StrCat("job ", job_id, " is already ", AbslSv(core::ToString(job.state)),
                     " and cannot become ", AbslSv(core::ToString(state))));
  }
  const int64_t now = NowMs();
  ASSIGN_OR_RETURN(Statement stmt,
                   Statement::Prepare(conn_,
                                      "UPDATE jobs SET state = ?, error = ?, started_ms = ?, "
                                      "finished_ms = ? WHERE id = ?"));
  // A job that ends without ever running (cancelled while queued) keeps started_ms 0.
  const bool starts = state == core::JobState::kRunning && job.started_ms == 0;
  stmt.Bind(1, core::ToString(state))
      .Bind(2, error)
      .Bind(3, starts ? now : job.started_ms)
      .Bind(4, core::IsTerminal(state) ? now : job.finished_ms)
      .Bind(5, job_id);
  RETURN_IF_ERROR(stmt.Run());
  return txn.Commit();
}

absl::Status SqliteStore::SetJobDevice(int64_t job_id, const core::DeviceInfo& device) {
  std::lock_guard<std::mutex> lock(mutex_);
  ASSIGN_OR_RETURN(Statement stmt,
                   Statement::Prepare(conn_, "UPDATE jobs SET device_json = ? WHERE id = ?"));
  stmt.Bind(1, EncodeDeviceInfo(device)).Bind(2, job_id);
  RETURN_IF_ERROR(stmt.Run());
  if (conn_.Changes() == 0) {
    return absl::NotFoundError(absl::StrCat("job ", job_id, " not found"));
  }
  return absl::OkStatus();
}

absl::Status SqliteStore::MarkItemRunning(int64_t item_id) {
  std::lock_guard<std::mutex> lock(mutex_);
  ASSIGN_OR_RETURN(Transaction txn, Transaction::Begin(conn_));
  ASSIGN_OR_RETURN(core::ItemStatus status, ItemStatusOf(conn_, item_id));
  if (status != core::ItemStatus::kQueued) {
    return absl::FailedPreconditionError(absl::StrCat("item ", item_id, " is ",
                                                      AbslSv(core::ToString(status)),
                                                      ", only a queued item can start"));
  }
  ASSIGN_OR_RETURN(Statement stmt,
                   Statement::Prepare(conn_, "UPDATE items SET status = 'running' WHERE id = ?"));
  stmt.Bind(1, item_id);
  RETURN_IF_ERROR(stmt.Run());
  return txn.Commit();
}

absl::Status SqliteStore::CancelPendingItems(int64_t job_id) {
  std::lock_guard<std::mutex> lock(mutex_);
  ASSIGN_OR_RETURN(Transaction txn, Transaction::Begin(conn_));
  RETURN_IF_ERROR(RequireJobLocked(job_id));
  ASSIGN_OR_RETURN(Statement stmt,
                   Statement::Prepare(conn_,
                                      "UPDATE items SET status = 'cancelled', error = 'cancelled' "
                                      "WHERE job_id = ? AND status = 'queued'"));
  stmt.Bind(1, job_id);
  RETURN_IF_ERROR(stmt.Run());
  return txn.Commit();
}

absl::StatusOr<std::vector<int64_t>> SqliteStore::RecoverUnfinished() {
  std::lock_guard<std::mutex> lock(mutex_);
  ASSIGN_OR_RETURN(Transaction txn, Transaction::Begin(conn_));
  {
    ASSIGN_OR_RETURN(Statement requeue, Statement::Prepare(conn_, kRequeueOwnItemsSql));
    requeue.Bind(1, options_.node);
    RETURN_IF_ERROR(requeue.Run());
  }
  ASSIGN_OR_RETURN(Statement stmt, Statement::Prepare(conn_, kOwnUnfinishedJobsSql));
  stmt.Bind(1, options_.node);
  std::vector<int64_t> ids;
  for (;;) {
    ASSIGN_OR_RETURN(bool row, stmt.Step());
    if (!row) break;
    ids.push_back(stmt.ColumnInt64(0));
  }
  RETURN_IF_ERROR(txn.Commit());
  return ids;
}

absl::Status SqliteStore::FinishItem(int64_t item_id, core::ItemStatus status,
                                     const std::string& error,
                                     const std::optional<core::Measurement>& measurement,
                                     const core::DeviceInfo& device,
                                     const core::TimingOptions& timing,
                                     const std::string& cache_key,
                                     std::optional<int64_t> cached_result_id) {
  return FinishItems({ItemFinish{item_id, status, error, measurement, cache_key, cached_result_id}},
                     device, timing);
}

absl::Status SqliteStore::FinishItems(const std::vector<ItemFinish>& items,
                                      const core::DeviceInfo& device,
                                      const core::TimingOptions& timing) {
  for (const ItemFinish& f : items) {
    RETURN_IF_ERROR(CheckFinishArguments(f.item_id, f.status, f.measurement.has_value(),
                                         f.cached_result_id.has_value()));
  }
  std::lock_guard<std::mutex> lock(mutex_);
  ASSIGN_OR_RETURN(Transaction txn, Transaction::Begin(conn_));
  for (const ItemFinish& f : items) RETURN_IF_ERROR(FinishItemLocked(f, device, timing));
  return txn.Commit();
}

absl::Status SqliteStore::FinishItemLocked(const ItemFinish& f, const core::DeviceInfo& device,
                                           const core::TimingOptions& timing) {
  ASSIGN_OR_RETURN(core::ItemStatus current, ItemStatusOf(conn_, f.item_id));
  if (core::IsFinal(current)) {
    return absl::FailedPreconditionError(
        absl::StrCat("item ", f.item_id, " is already ", AbslSv(core::ToString(current))));
  }
  std::optional<int64_t> result_id;
  int64_t measured_ms = 0;
  if (f.cached_result_id.has_value()) {
    ASSIGN_OR_RETURN(Statement find,
                     Statement::Prepare(conn_, "SELECT measured_ms FROM results WHERE id = ?"));
    find.Bind(1, *f.cached_result_id);
    ASSIGN_OR_RETURN(bool row, find.Step());
    if (!row) {
      return absl::NotFoundError(
          absl::StrCat("cached_result_id: result ", *f.cached_result_id, " not found"));
    }
    measured_ms = find.ColumnInt64(0);
  } else if (f.measurement.has_value()) {
    measured_ms = NowMs();
    ASSIGN_OR_RETURN(result_id, InsertResultLocked(f.item_id, *f.measurement, device, timing,
                                                   f.cache_key, measured_ms));
  }
  ASSIGN_OR_RETURN(Statement stmt,
                   Statement::Prepare(conn_,
                                      "UPDATE items SET status = ?, error = ?, cached = ?, "
                                      "result_id = ?, cached_result_id = ?, measured_ms = ? "
                                      "WHERE id = ?"));
  stmt.Bind(1, core::ToString(f.status))
      .Bind(2, f.error)
      .Bind(3, f.cached_result_id.has_value())
      .Bind(4, result_id)
      .Bind(5, f.cached_result_id)
      .Bind(6, measured_ms)
      .Bind(7, f.item_id);
  return stmt.Run();
}

absl::StatusOr<int64_t> SqliteStore::InsertResultLocked(
    int64_t item_id, const core::Measurement& measurement, const core::DeviceInfo& device,
    const core::TimingOptions& timing, const std::string& cache_key, int64_t measured_ms) {
  ASSIGN_OR_RETURN(int64_t device_context, ContextIdLocked("device", EncodeDeviceInfo(device)));
  ASSIGN_OR_RETURN(int64_t timing_context, ContextIdLocked("timing", EncodeTimingOptions(timing)));
  // The shape columns are copied from the item so history queries need no join.
  ASSIGN_OR_RETURN(
      Statement stmt,
      Statement::Prepare(
          conn_,
          "INSERT INTO results (job_id, item_id, measured_ms, device_name, device_sm, "
          "driver_version, cublaslt_version, device_context_id, m, k, n, pass, recipe, mode, "
          "groups, timing_context_id, measurement_json, cache_key, median_ms, node, "
          "device_uuid) "
          "SELECT i.job_id, i.id, ?, ?, ?, ?, ?, ?, i.m, i.k, i.n, i.pass, i.recipe, i.mode, "
          "i.groups, ?, ?, ?, ?, ?, ? FROM items i WHERE i.id = ?"));
  stmt.Bind(1, measured_ms)
      .Bind(2, device.name)
      .Bind(3, device.sm)
      .Bind(4, device.driver_version)
      .Bind(5, device.cublaslt_version)
      .Bind(6, device_context)
      .Bind(7, timing_context)
      .Bind(8, EncodeMeasurement(measurement))
      .Bind(9, cache_key)
      // SQLite stores NaN as NULL, which the NOT NULL column refuses; the JSON keeps it.
      .Bind(10, std::isfinite(measurement.time.median_ms) ? measurement.time.median_ms : 0.0)
      .Bind(11, options_.node)
      .Bind(12, device.uuid)
      .Bind(13, item_id);
  RETURN_IF_ERROR(stmt.Run());
  if (conn_.Changes() != 1) return ItemNotFound(item_id);
  return conn_.LastInsertRowId();
}

absl::StatusOr<int64_t> SqliteStore::ContextIdLocked(std::string_view kind,
                                                     const std::string& json) {
  ASSIGN_OR_RETURN(
      Statement find,
      Statement::Prepare(conn_, "SELECT id FROM contexts WHERE kind = ? AND json = ?"));
  find.Bind(1, kind).Bind(2, json);
  ASSIGN_OR_RETURN(bool row, find.Step());
  if (row) return find.ColumnInt64(0);
  ASSIGN_OR_RETURN(Statement insert,
                   Statement::Prepare(conn_, "INSERT INTO contexts (kind, json) VALUES (?, ?)"));
  insert.Bind(1, kind).Bind(2, json);
  RETURN_IF_ERROR(insert.Run());
  return conn_.LastInsertRowId();
}

absl::StatusOr<std::optional<CachedResult>> SqliteStore::LookupCache(const std::string& cache_key) {
  std::lock_guard<std::mutex> lock(mutex_);
  ASSIGN_OR_RETURN(Statement stmt,
                   Statement::Prepare(conn_,
                                      "SELECT r.id, r.measured_ms, r.measurement_json, "
                                      "r.node, r.device_uuid "
                                      "FROM results r JOIN items i ON i.id = r.item_id "
                                      "WHERE r.cache_key = ? AND i.status = 'done' "
                                      "ORDER BY r.id DESC LIMIT 1"));
  stmt.Bind(1, cache_key);
  ASSIGN_OR_RETURN(bool row, stmt.Step());
  if (!row) return std::optional<CachedResult>();
  CachedResult hit;
  hit.result_id = stmt.ColumnInt64(0);
  hit.measured_ms = stmt.ColumnInt64(1);
  ASSIGN_OR_RETURN(hit.measurement, DecodeMeasurement(stmt.ColumnText(2)));
  hit.node = stmt.ColumnText(3);
  hit.device_uuid = stmt.ColumnText(4);
  return std::optional<CachedResult>(std::move(hit));
}

absl::StatusOr<Page<ResultRow>> SqliteStore::QueryResults(const ResultFilter& filter) {
  ASSIGN_OR_RETURN(ResultQuery query, BuildResultQuery(filter));
  std::lock_guard<std::mutex> lock(mutex_);
  ASSIGN_OR_RETURN(Statement stmt, Statement::Prepare(conn_, query.sql));
  for (size_t i = 0; i < query.params.size(); ++i) {
    std::visit([&](const auto& value) { stmt.Bind(static_cast<int>(i) + 1, value); },
               query.params[i]);
  }
  Page<ResultRow> page;
  DecodedDevice last_device;
  for (;;) {
    ASSIGN_OR_RETURN(bool row, stmt.Step());
    if (!row) break;
    if (static_cast<int32_t>(page.items.size()) == filter.page_size) {
      page.next_page_token = MakePageToken(page.items.back().result_id);
      break;
    }
    ASSIGN_OR_RETURN(ResultRow result, ReadResultRow(SqliteRow(stmt), &last_device));
    page.items.push_back(std::move(result));
  }
  return page;
}

absl::Status SqliteStore::PutDaemon(const core::DaemonRecord& daemon) {
  std::lock_guard<std::mutex> lock(mutex_);
  ASSIGN_OR_RETURN(Statement stmt,
                   Statement::Prepare(conn_,
                                      "INSERT INTO daemons (node, heartbeat_ms, record_json) "
                                      "VALUES (?, ?, ?) ON CONFLICT (node) DO UPDATE SET "
                                      "heartbeat_ms = excluded.heartbeat_ms, "
                                      "record_json = excluded.record_json"));
  stmt.Bind(1, daemon.node).Bind(2, daemon.heartbeat_unix_ms).Bind(3, EncodeDaemon(daemon));
  return stmt.Run();
}

absl::StatusOr<std::vector<core::DaemonRecord>> SqliteStore::ListDaemons() {
  std::lock_guard<std::mutex> lock(mutex_);
  ASSIGN_OR_RETURN(Statement stmt,
                   Statement::Prepare(conn_, "SELECT record_json FROM daemons ORDER BY node"));
  std::vector<core::DaemonRecord> out;
  for (;;) {
    ASSIGN_OR_RETURN(bool row, stmt.Step());
    if (!row) break;
    ASSIGN_OR_RETURN(core::DaemonRecord d, DecodeDaemon(stmt.ColumnText(0)));
    out.push_back(std::move(d));
  }
  return out;
}

}  // namespace gemmprof::storage
