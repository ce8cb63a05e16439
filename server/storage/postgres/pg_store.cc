// PgStore: opening, jobs and items. Results, the cache and history are in
// pg_store_results.cc.
#include "server/storage/postgres/pg_store.h"

#include <chrono>
#include <utility>

#include "absl/strings/str_cat.h"
#include "server/storage/absl_string_view.h"
#include "server/storage/json_codec.h"
#include "server/storage/paging.h"
#include "server/storage/postgres/pg_migrations.h"
#include "server/storage/store_rows.h"
#include "server/storage/store_rules.h"

namespace gemmprof::storage {
namespace {

constexpr int32_t kMaxJobPageSize = 1000;

int64_t SystemNowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

absl::StatusOr<core::ItemStatus> ItemStatusOf(PgConnection& conn, int64_t item_id) {
  ASSIGN_OR_RETURN(PgResult result,
                   conn.Exec("SELECT status FROM items WHERE id = ? FOR UPDATE", {item_id}));
  if (result.Rows() == 0) return ItemNotFound(item_id);
  const std::string text = result.At(0).Text(0);
  std::optional<core::ItemStatus> status = core::ParseItemStatus(text);
  if (!status.has_value()) {
    return absl::DataLossError(
        absl::StrCat("items.status: unknown value '", text, "' in row ", item_id));
  }
  return *status;
}

std::vector<PgParam> ItemParams(const core::WorkItem& item) {
  return {item.job_id,
          int64_t{item.seq},
          item.op.name,
          std::string(core::ToString(item.op.pass)),
          item.op.shape.m,
          item.op.shape.k,
          item.op.shape.n,
          int64_t{item.op.groups},
          int64_t{item.op.layers},
          int64_t{item.op.per_layer},
          std::string(core::ToString(item.recipe)),
          std::string(core::ToString(item.mode)),
          GroupTokensText(item.op.group_tokens),
          std::string(core::ToString(item.op.layout)),
          std::string(core::ToString(item.fast_accum))};
}

// The advisory lock that reserves a node name (--node) on the database.
std::string NodeLockName(const std::string& node) { return "gemmprof-node:" + node; }

}  // namespace

absl::StatusOr<std::unique_ptr<PgStore>> PgStore::Open(const std::string& uri, Options options) {
  ASSIGN_OR_RETURN(PgTarget target, ParsePgUri(uri));
  ASSIGN_OR_RETURN(std::unique_ptr<PgConnection> conn, PgConnection::Open(std::move(target)));
  RETURN_IF_ERROR(PgMigrate(*conn));
  if (!options.node.empty()) {
    // One daemon per node name: two would resume each other's jobs. The session lock
    // goes with the connection, so it is taken again after every reconnect.
    auto claim = [node = options.node](PgConnection& c) -> absl::Status {
      ASSIGN_OR_RETURN(PgResult r,
                       c.Exec("SELECT pg_try_advisory_lock(hashtext(?))", {NodeLockName(node)}));
      if (r.At(0).Text(0) == "t") return absl::OkStatus();
      return absl::FailedPreconditionError(
          "--node " + node +
          ": another gemmprofd already uses this node name on this database; give each "
          "daemon its own --node");
    };
    RETURN_IF_ERROR(claim(*conn));
    conn->SetOnConnect(claim);
  }
  if (!options.now_ms) options.now_ms = SystemNowMs;
  return std::unique_ptr<PgStore>(new PgStore(std::move(conn), std::move(options)));
}

PgStore::PgStore(std::unique_ptr<PgConnection> conn, Options options)
    : conn_(std::move(conn)), options_(std::move(options)) {}

PgStore::~PgStore() {
  // The server drops a session's advisory locks only once its backend has seen the
  // disconnect, a moment after the client closed: a daemon restarted at once (or a test
  // reopening the name) could be refused the name meanwhile. Unlocking first makes the name
  // free when this returns. Best effort: a lost connection has no lock left to give back.
  if (!options_.node.empty() && conn_->connected()) {
    (void)conn_->Exec("SELECT pg_advisory_unlock(hashtext(?))", {NodeLockName(options_.node)});
  }
}

absl::StatusOr<core::JobRecord> PgStore::CreateJob(core::JobRecord job,
                                                   std::vector<core::WorkItem> items) {
  return Call([&]() -> absl::StatusOr<core::JobRecord> {
    ASSIGN_OR_RETURN(PgTransaction txn, PgTransaction::Begin(*conn_));
    ASSIGN_OR_RETURN(core::JobRecord stored, CreateJobLocked(job, items));
    RETURN_IF_ERROR(txn.Commit());
    return stored;
  });
}

absl::StatusOr<core::JobRecord> PgStore::CreateJobLocked(const core::JobRecord& job,
                                                         std::vector<core::WorkItem>& items) {
  ASSIGN_OR_RETURN(
      PgResult inserted,
      conn_->Exec(
          "INSERT INTO jobs (state, created_ms, spec_json, plan_json, device_json, "
          "submitted_by, node) VALUES ('queued', ?, ?, ?, ?, ?, ?) RETURNING id",
          {job.created_ms != 0 ? job.created_ms : options_.now_ms(), EncodeJobSpec(job.spec),
           EncodePlan(job.plan), EncodeDeviceInfo(job.device), job.submitted_by, options_.node}));
  const int64_t job_id = inserted.At(0).Int64(0);
  for (size_t i = 0; i < items.size(); ++i) {
    items[i].job_id = job_id;
    items[i].seq = static_cast<int32_t>(i);
    RETURN_IF_ERROR(conn_
                        ->Exec("INSERT INTO items (job_id, seq, op_name, pass, m, k, n, groups, "
                               "layers, per_layer, recipe, mode, group_tokens, moe_layout, "
                               "fast_accum, status) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, "
                               "?, ?, ?, 'queued')",
                               ItemParams(items[i]))
                        .status());
  }
  return GetJobLocked(job_id);
}

absl::StatusOr<core::JobRecord> PgStore::GetJob(int64_t job_id) {
  return Call([&]() -> absl::StatusOr<core::JobRecord> {
    ASSIGN_OR_RETURN(core::JobRecord job, GetJobLocked(job_id));
    RETURN_IF_ERROR(FillMeasuringNodes(job));
    return job;
  });
}

absl::StatusOr<core::JobRecord> PgStore::GetJobLocked(int64_t job_id) {
  ASSIGN_OR_RETURN(PgResult result, conn_->Exec(absl::StrCat("SELECT ", AbslSv(kJobColumns),
                                                             " FROM jobs j WHERE j.id = ?"),
                                                {job_id}));
  if (result.Rows() == 0) return JobNotFound(job_id);
  return ReadJobRow(result.At(0));
}

absl::Status PgStore::RequireJobLocked(int64_t job_id) {
  ASSIGN_OR_RETURN(PgResult result, conn_->Exec("SELECT 1 FROM jobs WHERE id = ?", {job_id}));
  return result.Rows() > 0 ? absl::OkStatus() : JobNotFound(job_id);
}

absl::StatusOr<Page<core::JobRecord>> PgStore::ListJobs(const JobFilter& filter) {
  RETURN_IF_ERROR(ValidatePageSize(filter.page_size, kMaxJobPageSize));
  ASSIGN_OR_RETURN(std::optional<int64_t> before_id, ParsePageToken(filter.page_token));
  std::string sql = absl::StrCat("SELECT ", AbslSv(kJobColumns), " FROM jobs j WHERE j.id < ?");
  std::vector<PgParam> params = {before_id.value_or(INT64_MAX)};
  if (filter.state.has_value()) {
    absl::StrAppend(&sql, " AND j.state = ?");
    params.emplace_back(std::string(core::ToString(*filter.state)));
  }
  if (filter.node.has_value()) {
    absl::StrAppend(&sql, " AND j.node = ?");
    params.emplace_back(*filter.node);
  }
  if (filter.campaign.has_value()) {
    absl::StrAppend(&sql, " AND (j.spec_json::jsonb ->> 'campaign') = ?");
    params.emplace_back(*filter.campaign);
  }
  absl::StrAppend(&sql, " ORDER BY j.id DESC LIMIT ?");
  // One row more than asked tells whether a next page exists.
  params.emplace_back(int64_t{filter.page_size} + 1);
  return Call([&]() -> absl::StatusOr<Page<core::JobRecord>> {
    ASSIGN_OR_RETURN(PgResult result, conn_->Exec(sql, params));
    Page<core::JobRecord> page;
    for (int r = 0; r < result.Rows(); ++r) {
      if (static_cast<int32_t>(page.items.size()) == filter.page_size) {
        page.next_page_token = MakePageToken(page.items.back().id);
        break;
      }
      ASSIGN_OR_RETURN(core::JobRecord job, ReadJobRow(result.At(r)));
      RETURN_IF_ERROR(FillMeasuringNodes(job));
      page.items.push_back(std::move(job));
    }
    return page;
  });
}

absl::StatusOr<std::vector<core::ItemRecord>> PgStore::GetItems(int64_t job_id) {
  return Call([&]() -> absl::StatusOr<std::vector<core::ItemRecord>> {
    ASSIGN_OR_RETURN(
        PgResult result,
        conn_->Exec(absl::StrCat("SELECT ", AbslSv(kItemColumns),
                                 " FROM items i LEFT JOIN results r ON r.id = "
                                 "coalesce(i.result_id, i.cached_result_id) WHERE i.job_id = ? "
                                 "ORDER BY i.seq"),
                    {job_id}));
    if (result.Rows() == 0) RETURN_IF_ERROR(RequireJobLocked(job_id));
    std::vector<core::ItemRecord> items;
    for (int r = 0; r < result.Rows(); ++r) {
      ASSIGN_OR_RETURN(core::ItemRecord item, ReadItemRow(result.At(r)));
      items.push_back(std::move(item));
    }
    return items;
  });
}

absl::Status PgStore::SetJobState(int64_t job_id, core::JobState state, const std::string& error) {
  return Call([&]() -> absl::Status {
    ASSIGN_OR_RETURN(PgTransaction txn, PgTransaction::Begin(*conn_));
    RETURN_IF_ERROR(SetJobStateLocked(job_id, state, error));
    return txn.Commit();
  });
}

absl::Status PgStore::SetJobStateLocked(int64_t job_id, core::JobState state,
                                        const std::string& error) {
  RETURN_IF_ERROR(conn_->Exec("SELECT 1 FROM jobs WHERE id = ? FOR UPDATE", {job_id}).status());
  ASSIGN_OR_RETURN(core::JobRecord job, GetJobLocked(job_id));
  bool noop = false;
  RETURN_IF_ERROR(CheckStateChange(job_id, job.state, state, &noop));
  if (noop) return absl::OkStatus();
  const int64_t now = options_.now_ms();
  // A job that ends without ever running (cancelled while queued) keeps started_ms 0.
  const bool starts = state == core::JobState::kRunning && job.started_ms == 0;
  return conn_
      ->Exec("UPDATE jobs SET state = ?, error = ?, started_ms = ?, finished_ms = ? WHERE id = ?",
             {std::string(core::ToString(state)), error, starts ? now : job.started_ms,
              core::IsTerminal(state) ? now : job.finished_ms, job_id})
      .status();
}

absl::Status PgStore::SetJobDevice(int64_t job_id, const core::DeviceInfo& device) {
  return Call([&]() -> absl::Status {
    ASSIGN_OR_RETURN(PgTransaction txn, PgTransaction::Begin(*conn_));
    ASSIGN_OR_RETURN(PgResult result, conn_->Exec("UPDATE jobs SET device_json = ? WHERE id = ?",
                                                  {EncodeDeviceInfo(device), job_id}));
    if (result.Affected() == 0) return JobNotFound(job_id);
    return txn.Commit();
  });
}

absl::Status PgStore::MarkItemRunning(int64_t item_id) {
  return Call([&]() -> absl::Status {
    ASSIGN_OR_RETURN(PgTransaction txn, PgTransaction::Begin(*conn_));
    ASSIGN_OR_RETURN(core::ItemStatus status, ItemStatusOf(*conn_, item_id));
    if (status != core::ItemStatus::kQueued) {
      return absl::FailedPreconditionError(absl::StrCat("item ", item_id, " is ",
                                                        AbslSv(core::ToString(status)),
                                                        ", only a queued item can start"));
    }
    RETURN_IF_ERROR(
        conn_->Exec("UPDATE items SET status = 'running' WHERE id = ?", {item_id}).status());
    return txn.Commit();
  });
}

absl::Status PgStore::CancelPendingItems(int64_t job_id) {
  return Call([&]() -> absl::Status {
    ASSIGN_OR_RETURN(PgTransaction txn, PgTransaction::Begin(*conn_));
    RETURN_IF_ERROR(RequireJobLocked(job_id));
    RETURN_IF_ERROR(conn_
                        ->Exec("UPDATE items SET status = 'cancelled', error = 'cancelled' "
                               "WHERE job_id = ? AND status = 'queued'",
                               {job_id})
                        .status());
    return txn.Commit();
  });
}

absl::StatusOr<std::vector<int64_t>> PgStore::RecoverUnfinished() {
  return Call([&]() -> absl::StatusOr<std::vector<int64_t>> {
    ASSIGN_OR_RETURN(PgTransaction txn, PgTransaction::Begin(*conn_));
    RETURN_IF_ERROR(conn_
                        ->Exec("UPDATE items SET status = 'queued' WHERE status = 'running' AND "
                               "job_id IN (SELECT id FROM jobs WHERE node = ?) AND job_id NOT IN "
                               "(SELECT job_id FROM cluster_batches)",
                               {options_.node})
                        .status());
    ASSIGN_OR_RETURN(PgResult result,
                     conn_->Exec("SELECT id FROM jobs WHERE state IN ('queued', 'running') AND "
                                 "node = ? ORDER BY id",
                                 {options_.node}));
    std::vector<int64_t> ids;
    for (int r = 0; r < result.Rows(); ++r) ids.push_back(result.At(r).Int64(0));
    RETURN_IF_ERROR(txn.Commit());
    return ids;
  });
}

}  // namespace gemmprof::storage
