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
};

}  // namespace gemmprof::storage
