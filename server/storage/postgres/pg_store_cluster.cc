// PgStore: the cluster queue. A cluster job's batches are rows of cluster_batches; any
// daemon with an idle device of the batch's model claims one (FOR UPDATE SKIP LOCKED, so
// claimers never wait for each other) under a lease it renews while it measures. A lease
// that lapses (its node died or lost the database) leaves the batch claimable again;
// the next claim queues the items the lapsed holder left running. Items record exactly
// one outcome each (FinishItemLocked refuses a final item), so a holder that comes back
// after its lease lapsed cannot record a second result.
#include <string>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "server/storage/postgres/pg_store.h"
#include "server/storage/store_rules.h"

namespace gemmprof::storage {
namespace {

// The database's clock in unix milliseconds: leases compare times of one clock.
constexpr char kDbNowMs[] = "(extract(epoch FROM clock_timestamp()) * 1000)::bigint";

absl::StatusOr<std::vector<int64_t>> ParseItemIds(int64_t batch_id, const std::string& text) {
  std::vector<int64_t> ids;
  for (absl::string_view part : absl::StrSplit(text, ',', absl::SkipEmpty())) {
    int64_t id = 0;
    if (!absl::SimpleAtoi(part, &id)) {
      return absl::DataLossError(absl::StrCat("cluster_batches.item_ids: '", text,
                                              "' is not a list of item ids in row ", batch_id));
    }
    ids.push_back(id);
  }
  return ids;
}

}  // namespace

absl::StatusOr<core::JobRecord> PgStore::CreateClusterJob(
    core::JobRecord job, std::vector<core::WorkItem> items,
    const std::vector<std::vector<int32_t>>& batches, const ClusterTarget& target) {
  return Call([&]() -> absl::StatusOr<core::JobRecord> {
    ASSIGN_OR_RETURN(PgTransaction txn, PgTransaction::Begin(*conn_));
    ASSIGN_OR_RETURN(core::JobRecord stored, CreateJobLocked(job, items));
    ASSIGN_OR_RETURN(PgResult ids, conn_->Exec("SELECT id FROM items WHERE job_id = ? ORDER BY seq",
                                               {stored.id}));
    for (size_t b = 0; b < batches.size(); ++b) {
      std::vector<int64_t> item_ids;
      for (int32_t seq : batches[b]) {
        if (seq < 0 || seq >= ids.Rows()) {
          return absl::InternalError(
              absl::StrCat("batch ", b, " names item seq ", seq, " of ", ids.Rows()));
        }
        item_ids.push_back(ids.At(seq).Int64(0));
      }
      RETURN_IF_ERROR(conn_
                          ->Exec("INSERT INTO cluster_batches (job_id, seq, item_ids, model, node, "
                                 "submitted_by, priority) VALUES (?, ?, ?, ?, ?, ?, ?)",
                                 {stored.id, static_cast<int64_t>(b), absl::StrJoin(item_ids, ","),
                                  target.model, target.node, stored.submitted_by,
                                  int64_t{stored.spec.priority}})
                          .status());
    }
    RETURN_IF_ERROR(txn.Commit());
    return stored;
  });
}

absl::StatusOr<std::optional<ClusterBatch>> PgStore::ClaimClusterBatch(const std::string& model,
                                                                       int64_t lease_ms) {
  // Fair share (docs/cluster.md): higher priority first; then the submitter holding the
  // fewest live leases (submitters take turns); then the job with the fewest open batches
  // (a small job is not stuck behind a large one); then the oldest job, in its order.
  const std::string sql = absl::StrCat(
      "WITH now AS (SELECT ", kDbNowMs,
      " AS ms), pick AS ("
      "SELECT b.id, b.state AS old_state, b.owner AS old_owner FROM cluster_batches b, now "
      "WHERE b.model = ? AND (b.node = '' OR b.node = ?) "
      "AND (b.state = 'queued' OR (b.state = 'leased' AND b.lease_until_ms < now.ms)) "
      "AND EXISTS (SELECT 1 FROM jobs j WHERE j.id = b.job_id AND j.state IN ('queued', "
      "'running')) "
      "ORDER BY b.priority DESC, "
      "(SELECT count(*) FROM cluster_batches l WHERE l.state = 'leased' AND l.lease_until_ms >= "
      "now.ms AND l.submitted_by = b.submitted_by), "
      "(SELECT count(*) FROM cluster_batches o WHERE o.job_id = b.job_id AND o.state IN "
      "('queued', 'leased')), "
      "b.job_id, b.seq LIMIT 1 FOR UPDATE OF b SKIP LOCKED) "
      "UPDATE cluster_batches c SET state = 'leased', owner = ?, lease_until_ms = now.ms + ?, "
      "attempts = c.attempts + 1, expirations = c.expirations + (CASE WHEN pick.old_state = "
      "'leased' THEN 1 ELSE 0 END) FROM pick, now WHERE c.id = pick.id "
      "RETURNING c.id, c.job_id, c.item_ids, c.attempts, pick.old_state, pick.old_owner");
  return Call([&]() -> absl::StatusOr<std::optional<ClusterBatch>> {
    ASSIGN_OR_RETURN(PgTransaction txn, PgTransaction::Begin(*conn_));
    ASSIGN_OR_RETURN(PgResult claimed,
                     conn_->Exec(sql, {model, options_.node, options_.node, lease_ms}));
    if (claimed.Rows() == 0) return std::optional<ClusterBatch>();
    const PgResult::Row row = claimed.At(0);
    ClusterBatch batch;
    batch.id = row.Int64(0);
    batch.job_id = row.Int64(1);
    const std::string item_ids = row.Text(2);
    ASSIGN_OR_RETURN(batch.item_ids, ParseItemIds(batch.id, item_ids));
    batch.attempts = static_cast<int32_t>(row.Int64(3));
    if (row.Text(4) == "leased") batch.previous_owner = row.Text(5);
    // What a lapsed holder left running runs again here.
    RETURN_IF_ERROR(conn_
                        ->Exec("UPDATE items SET status = 'queued' WHERE job_id = ? AND status = "
                               "'running' AND id = ANY(string_to_array(?, ',')::bigint[])",
                               {batch.job_id, item_ids})
                        .status());
    ASSIGN_OR_RETURN(core::JobRecord job, GetJobLocked(batch.job_id));
    if (job.state == core::JobState::kQueued) {
      RETURN_IF_ERROR(SetJobStateLocked(batch.job_id, core::JobState::kRunning, ""));
    }
    RETURN_IF_ERROR(txn.Commit());
    return std::optional<ClusterBatch>(std::move(batch));
  });
}

absl::Status PgStore::RenewClusterLease(int64_t batch_id, int64_t lease_ms) {
  return Call([&]() -> absl::Status {
    ASSIGN_OR_RETURN(
        PgResult renewed,
        conn_->Exec(absl::StrCat("UPDATE cluster_batches SET lease_until_ms = ", kDbNowMs,
                                 " + ? WHERE id = ? AND owner = ? AND state = 'leased'"),
                    {lease_ms, batch_id, options_.node}));
    if (renewed.Affected() == 0) {
      return absl::FailedPreconditionError(
          absl::StrCat("batch ", batch_id, " is no longer leased to node ", options_.node,
                       " (its lease lapsed and another node took it, or its job ended)"));
    }
    return absl::OkStatus();
  });
}

absl::Status PgStore::FillMeasuringNodes(core::JobRecord& job) {
  job.measuring_nodes.clear();
  // Only a running job has batches in hand (a this-node job has no batch rows).
  if (job.state != core::JobState::kRunning) return absl::OkStatus();
  ASSIGN_OR_RETURN(PgResult holders,
                   conn_->Exec(absl::StrCat("SELECT DISTINCT owner FROM cluster_batches WHERE "
                                            "job_id = ? AND state = 'leased' AND "
                                            "lease_until_ms >= ",
                                            kDbNowMs, " ORDER BY owner"),
                               {job.id}));
  for (int r = 0; r < holders.Rows(); ++r) job.measuring_nodes.push_back(holders.At(r).Text(0));
  return absl::OkStatus();
}

absl::StatusOr<bool> PgStore::FinishClusterBatch(int64_t batch_id) {
  return Call([&]() -> absl::StatusOr<bool> {
    ASSIGN_OR_RETURN(PgTransaction txn, PgTransaction::Begin(*conn_));
    ASSIGN_OR_RETURN(PgResult found,
                     conn_->Exec("SELECT job_id FROM cluster_batches WHERE id = ?", {batch_id}));
    if (found.Rows() == 0)
      return absl::NotFoundError(absl::StrCat("batch ", batch_id, " not found"));
    const int64_t job_id = found.At(0).Int64(0);
    // The job's row serializes its last two batches' finishes: exactly one sees none left.
    RETURN_IF_ERROR(conn_->Exec("SELECT 1 FROM jobs WHERE id = ? FOR UPDATE", {job_id}).status());
    ASSIGN_OR_RETURN(PgResult done,
                     conn_->Exec("UPDATE cluster_batches SET state = 'done', lease_until_ms = 0 "
                                 "WHERE id = ? AND owner = ? AND state = 'leased'",
                                 {batch_id, options_.node}));
    if (done.Affected() == 0) {
      return absl::FailedPreconditionError(
          absl::StrCat("batch ", batch_id, " is no longer leased to node ", options_.node));
    }
    ASSIGN_OR_RETURN(PgResult open,
                     conn_->Exec("SELECT count(*) FROM cluster_batches WHERE job_id = ? AND "
                                 "state IN ('queued', 'leased')",
                                 {job_id}));
    const bool last = open.At(0).Int64(0) == 0;
    RETURN_IF_ERROR(txn.Commit());
    return last;
  });
}

absl::Status PgStore::ReleaseClusterBatch(int64_t batch_id) {
  return Call([&]() -> absl::Status {
    ASSIGN_OR_RETURN(PgTransaction txn, PgTransaction::Begin(*conn_));
    ASSIGN_OR_RETURN(PgResult released,
                     conn_->Exec("UPDATE cluster_batches SET state = 'queued', owner = '', "
                                 "lease_until_ms = 0 WHERE id = ? AND owner = ? AND state = "
                                 "'leased' RETURNING job_id, item_ids",
                                 {batch_id, options_.node}));
    if (released.Rows() == 1) {
      RETURN_IF_ERROR(conn_
                          ->Exec("UPDATE items SET status = 'queued' WHERE job_id = ? AND status "
                                 "= 'running' AND id = ANY(string_to_array(?, ',')::bigint[])",
                                 {released.At(0).Int64(0), released.At(0).Text(1)})
                          .status());
    }
    return txn.Commit();
  });
}

absl::Status PgStore::CancelClusterBatches(int64_t job_id) {
  return Call([&]() -> absl::Status {
    ASSIGN_OR_RETURN(PgTransaction txn, PgTransaction::Begin(*conn_));
    RETURN_IF_ERROR(conn_
                        ->Exec("UPDATE cluster_batches SET state = 'cancelled' WHERE job_id = ? "
                               "AND state IN ('queued', 'leased')",
                               {job_id})
                        .status());
    // Items a holder measures now: their results would be refused (an item is final once).
    RETURN_IF_ERROR(conn_
                        ->Exec("UPDATE items SET status = 'cancelled', error = 'cancelled' WHERE "
                               "job_id = ? AND status IN ('queued', 'running')",
                               {job_id})
                        .status());
    return txn.Commit();
  });
}

absl::StatusOr<ClusterQueueCounts> PgStore::CountClusterBatches() {
  return Call([&]() -> absl::StatusOr<ClusterQueueCounts> {
    ASSIGN_OR_RETURN(
        PgResult counts,
        conn_->Exec(absl::StrCat(
            "SELECT count(*) FILTER (WHERE b.state = 'queued'), count(*) FILTER (WHERE b.state = "
            "'leased' AND b.lease_until_ms >= now.ms), count(*) FILTER (WHERE b.state = 'leased' "
            "AND b.lease_until_ms < now.ms) FROM cluster_batches b, (SELECT ",
            kDbNowMs, " AS ms) now")));
    ClusterQueueCounts c;
    c.queued = counts.At(0).Int64(0);
    c.leased = counts.At(0).Int64(1);
    c.expired = counts.At(0).Int64(2);
    return c;
  });
}

absl::Status PgStore::RequestDrain(const std::string& node) {
  return Call([&]() -> absl::Status {
    ASSIGN_OR_RETURN(PgResult asked,
                     conn_->Exec(absl::StrCat("UPDATE daemons SET drain_requested_ms = ", kDbNowMs,
                                              " WHERE node = ?"),
                                 {node}));
    if (asked.Affected() == 0) {
      return absl::NotFoundError(absl::StrCat("--node ", node,
                                              ": no daemon of this name shares the store "
                                              "(`gemmprof cluster` lists them)"));
    }
    return absl::OkStatus();
  });
}

absl::StatusOr<int64_t> PgStore::DrainRequest(const std::string& node) {
  return Call([&]() -> absl::StatusOr<int64_t> {
    ASSIGN_OR_RETURN(PgResult row,
                     conn_->Exec("SELECT drain_requested_ms FROM daemons WHERE node = ?", {node}));
    return row.Rows() == 0 ? int64_t{0} : row.At(0).Int64(0);
  });
}

}  // namespace gemmprof::storage
