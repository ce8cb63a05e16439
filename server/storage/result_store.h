// Where jobs, items and measurements live: SqliteStore (embedded, one daemon) or
// PgStore (PostgreSQL, shared by the daemons of a cluster); open_store.h picks one.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/daemon_record.h"
#include "core/job.h"
#include "core/query.h"
#include "core/result.h"
#include "core/status.h"

namespace gemmprof::storage {

template <typename T>
struct Page {
  std::vector<T> items;
  std::string next_page_token;  // empty when this is the last page
};

// The filters and rows of ListJobs and QueryResults are core's, shared with the API and
// the CLI.
using core::JobFilter;
using core::ResultFilter;
using core::ResultRow;

// A cache hit: the original measurement and when it was made.
struct CachedResult {
  int64_t result_id = 0;
  int64_t measured_ms = 0;
  std::string node;         // where it was measured
  std::string device_uuid;  // on which GPU
  core::Measurement measurement;
};

// One item's final outcome, for ResultStore::FinishItems (arguments as FinishItem's).
struct ItemFinish {
  int64_t item_id = 0;
  core::ItemStatus status = core::ItemStatus::kDone;
  std::string error;
  std::optional<core::Measurement> measurement;
  std::string cache_key;
  std::optional<int64_t> cached_result_id;
};

// A batch of a job that runs through the cluster queue (PostgreSQL only): the items one
// daemon measures in one set of rounds, under a lease it renews while it measures.
struct ClusterBatch {
  int64_t id = 0;
  int64_t job_id = 0;
  std::vector<int64_t> item_ids;
  int32_t attempts = 0;        // claims so far, this one included
  std::string previous_owner;  // the node whose lease lapsed, when this claim re-runs it
};

// What a cluster job's batches may run on: a device model (DeviceInfo::name) and, for
// `--where node:NAME`, one node.
struct ClusterTarget {
  std::string model;
  std::string node;  // empty: any node
};

// The cluster queue's batches right now, every node's.
struct ClusterQueueCounts {
  int64_t queued = 0;
  int64_t leased = 0;   // held under a live lease
  int64_t expired = 0;  // leased, the lease lapsed, not claimed again yet
};

// Thread-safe: the API threads and the workers call it concurrently. Several daemons
// (nodes) may share one store (PostgreSQL): each store object knows its own node name
// (StoreOptions::node in open_store.h); jobs are owned by the node that created them,
// while reads (GetJob, ListJobs, GetItems, QueryResults) and LookupCache see every node.
// Errors: NotFound for unknown ids, InvalidArgument for bad filters/tokens,
// Internal / Unavailable for database failures.
class ResultStore {
 public:
  virtual ~ResultStore() = default;

  // Persists the job (state queued) and all its items in one transaction, assigning
  // ids (job.id, item.id, item.job_id, item.seq in order) and job.node = this store's
  // node. Returns the stored job.
  virtual absl::StatusOr<core::JobRecord> CreateJob(core::JobRecord job,
                                                    std::vector<core::WorkItem> items) = 0;
  virtual absl::StatusOr<core::JobRecord> GetJob(int64_t job_id) = 0;
  // Newest first.
  virtual absl::StatusOr<Page<core::JobRecord>> ListJobs(const JobFilter& filter) = 0;
  // Items in seq order, with their results.
  virtual absl::StatusOr<std::vector<core::ItemRecord>> GetItems(int64_t job_id) = 0;

  // Sets state (and started/finished times as the state implies) and error text.
  virtual absl::Status SetJobState(int64_t job_id, core::JobState state,
                                   const std::string& error) = 0;
  // Records the device a job actually runs on (the worker's, on a node of several GPUs).
  virtual absl::Status SetJobDevice(int64_t job_id, const core::DeviceInfo& device) = 0;
  virtual absl::Status MarkItemRunning(int64_t item_id) = 0;
  // Final outcome of an item. With `measurement`, a result row is written too (with
  // `device`, `timing` and `cache_key`), in the same transaction as the item update;
  // `cached` items point at the original result instead of duplicating it.
  virtual absl::Status FinishItem(int64_t item_id, core::ItemStatus status,
                                  const std::string& error,
                                  const std::optional<core::Measurement>& measurement,
                                  const core::DeviceInfo& device, const core::TimingOptions& timing,
                                  const std::string& cache_key,
                                  std::optional<int64_t> cached_result_id) = 0;
  // FinishItem for several items (one measurement group) in one transaction: all of them
  // are recorded or, on any error, none.
  virtual absl::Status FinishItems(const std::vector<ItemFinish>& items,
                                   const core::DeviceInfo& device,
                                   const core::TimingOptions& timing) = 0;
  // Marks every still-queued item of the job cancelled (used by CancelJob).
  virtual absl::Status CancelPendingItems(int64_t job_id) = 0;

  // Newest non-cached result with this key, measured on any node, if any.
  virtual absl::StatusOr<std::optional<CachedResult>> LookupCache(const std::string& cache_key) = 0;

  // After a restart: this node's items left running go back to queued; returns the ids
  // of this node's jobs not in a terminal state, oldest first. Other nodes' jobs are
  // theirs to resume.
  virtual absl::StatusOr<std::vector<int64_t>> RecoverUnfinished() = 0;

  virtual absl::StatusOr<Page<ResultRow>> QueryResults(const ResultFilter& filter) = 0;

  // The daemons sharing this store (`gemmprof cluster`): each writes its record, keyed by
  // its node, at start, at every heartbeat and at a clean stop; a node's record replaces
  // the one before it.
  virtual absl::Status PutDaemon(const core::DaemonRecord& daemon) = 0;
  // Every daemon record, by node.
  virtual absl::StatusOr<std::vector<core::DaemonRecord>> ListDaemons() = 0;

  // The cluster queue (docs/cluster.md): only a store that several daemons share has
  // one; the others answer FailedPrecondition.
  virtual bool HasClusterQueue() const { return false; }
  // CreateJob, plus the job's batches (item seqs, in the order they are handed out)
  // queued for `target`, in the same transaction.
  virtual absl::StatusOr<core::JobRecord> CreateClusterJob(
      core::JobRecord job, std::vector<core::WorkItem> items,
      const std::vector<std::vector<int32_t>>& batches, const ClusterTarget& target);
  // Leases the next batch a device of `model` on this node may run (queued, or leased
  // under a lease that lapsed) for `lease_ms`, in the fair-share order; its job becomes
  // running, and items a lapsed holder left running are queued again. nullopt: none.
  virtual absl::StatusOr<std::optional<ClusterBatch>> ClaimClusterBatch(const std::string& model,
                                                                        int64_t lease_ms);
  // Extends this node's lease of the batch; FailedPrecondition once it is not held by
  // this node any more (it lapsed and another node claimed it, or the job ended).
  virtual absl::Status RenewClusterLease(int64_t batch_id, int64_t lease_ms);
  // The batch is measured: done, and true when it was its job's last open batch (the
  // caller ends the job). FailedPrecondition when this node no longer holds it.
  virtual absl::StatusOr<bool> FinishClusterBatch(int64_t batch_id);
  // Gives a held batch back to the queue unmeasured (drain, stop, device lost).
  virtual absl::Status ReleaseClusterBatch(int64_t batch_id);
  // A cancelled job's batches: none is handed out any more, and its queued and running
  // items are cancelled.
  virtual absl::Status CancelClusterBatches(int64_t job_id);
  virtual absl::StatusOr<ClusterQueueCounts> CountClusterBatches();
  // `gemmprofd --drain`: asks the daemon of `node` to drain (it reads DrainRequest every
  // few seconds). NotFound naming the node when no daemon of that name wrote a record.
  virtual absl::Status RequestDrain(const std::string& node);
  // When the last drain of `node` was asked (database clock, unix ms; 0: never).
  virtual absl::StatusOr<int64_t> DrainRequest(const std::string& node);
};

}  // namespace gemmprof::storage
