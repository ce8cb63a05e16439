// ResultStore on PostgreSQL: the store several daemons (nodes) of a cluster share.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "server/storage/postgres/pg_connection.h"
#include "server/storage/result_store.h"

namespace gemmprof::storage {

// One connection, one mutex: calls are serialized, as in SqliteStore, whose behaviour
// (sqlite_store.h's comments) this store shares call for call; only the failures differ.
//
// Failures: when PostgreSQL goes away, a call fails with Unavailable ("PostgreSQL at
// HOST:PORT is unreachable: ...; the call can be retried") and whatever it was writing
// is rolled back (every write is one transaction). The next call connects again; a
// call whose very first statement finds the old connection dead is run again on a new
// one at once, since the server never saw it.
//
// Several nodes writing the same cache key at once: each measured item gets exactly one
// result row (UNIQUE (item_id)), device and timing contexts are shared rows inserted
// with ON CONFLICT DO NOTHING, and LookupCache picks the newest result by id, so every
// node sees the same cache entry once the writers have committed. Two nodes that
// measured the same key both keep their measurement as history; neither is lost and
// neither is stored twice.
class PgStore : public ResultStore {
 public:
  struct Options {
    std::string node;  // StoreOptions::node
    std::function<int64_t()> now_ms;
  };

  // Connects to `uri` (postgresql://USER@HOST:PORT/DB) and migrates the schema.
  // Errors: see OpenResultStore (open_store.h).
  static absl::StatusOr<std::unique_ptr<PgStore>> Open(const std::string& uri, Options options);

  PgStore(const PgStore&) = delete;
  PgStore& operator=(const PgStore&) = delete;
  // Gives the node name back before the connection closes (see the .cc).
  ~PgStore() override;

  absl::StatusOr<core::JobRecord> CreateJob(core::JobRecord job,
                                            std::vector<core::WorkItem> items) override;
  absl::StatusOr<core::JobRecord> GetJob(int64_t job_id) override;
  absl::StatusOr<Page<core::JobRecord>> ListJobs(const JobFilter& filter) override;
  absl::StatusOr<std::vector<core::ItemRecord>> GetItems(int64_t job_id) override;
  absl::Status SetJobState(int64_t job_id, core::JobState state, const std::string& error) override;
  absl::Status SetJobDevice(int64_t job_id, const core::DeviceInfo& device) override;
  absl::Status MarkItemRunning(int64_t item_id) override;
  absl::Status FinishItem(int64_t item_id, core::ItemStatus status, const std::string& error,
                          const std::optional<core::Measurement>& measurement,
                          const core::DeviceInfo& device, const core::TimingOptions& timing,
                          const std::string& cache_key,
                          std::optional<int64_t> cached_result_id) override;
  absl::Status FinishItems(const std::vector<ItemFinish>& items, const core::DeviceInfo& device,
                           const core::TimingOptions& timing) override;
  absl::Status CancelPendingItems(int64_t job_id) override;
  absl::StatusOr<std::optional<CachedResult>> LookupCache(const std::string& cache_key) override;
  absl::StatusOr<std::vector<int64_t>> RecoverUnfinished() override;
  absl::StatusOr<Page<ResultRow>> QueryResults(const ResultFilter& filter) override;
  absl::Status PutDaemon(const core::DaemonRecord& daemon) override;
  absl::StatusOr<std::vector<core::DaemonRecord>> ListDaemons() override;

  // The cluster queue (pg_store_cluster.cc): batches are rows claimed with FOR UPDATE
  // SKIP LOCKED; leases are times of the database's clock, so the nodes' clocks do not
  // matter.
  bool HasClusterQueue() const override { return true; }
  absl::StatusOr<core::JobRecord> CreateClusterJob(core::JobRecord job,
                                                   std::vector<core::WorkItem> items,
                                                   const std::vector<std::vector<int32_t>>& batches,
                                                   const ClusterTarget& target) override;
  absl::StatusOr<std::optional<ClusterBatch>> ClaimClusterBatch(const std::string& model,
                                                                int64_t lease_ms) override;
  absl::Status RenewClusterLease(int64_t batch_id, int64_t lease_ms) override;
  absl::StatusOr<bool> FinishClusterBatch(int64_t batch_id) override;
  absl::Status ReleaseClusterBatch(int64_t batch_id) override;
  absl::Status CancelClusterBatches(int64_t job_id) override;
  absl::StatusOr<ClusterQueueCounts> CountClusterBatches() override;
  absl::Status RequestDrain(const std::string& node) override;
  absl::StatusOr<int64_t> DrainRequest(const std::string& node) override;

 private:
  PgStore(std::unique_ptr<PgConnection> conn, Options options);

  // Runs `body` with the mutex held, once more on a new connection when its first
  // statement found the old one dead (see the class comment).
  template <typename F>
  auto Call(F body) -> decltype(body()) {
    std::lock_guard<std::mutex> lock(mutex_);
    conn_->BeginCall();
    auto result = body();
    if (!result.ok() && conn_->LostOnFirstStatement()) {
      conn_->BeginCall();
      result = body();
    }
    return result;
  }

  // The *Locked helpers expect mutex_ held (and run inside the caller's transaction).
  absl::StatusOr<core::JobRecord> GetJobLocked(int64_t job_id);
  // A running cluster job's measuring_nodes, from its live leases (pg_store_cluster.cc);
  // for the readers (GetJob, ListJobs), not the queue's own reads (a claim, a create).
  absl::Status FillMeasuringNodes(core::JobRecord& job);
  absl::Status RequireJobLocked(int64_t job_id);
  absl::StatusOr<int64_t> ContextIdLocked(std::string_view kind, const std::string& json);
  absl::StatusOr<int64_t> InsertResultLocked(int64_t item_id, const core::Measurement& measurement,
                                             const core::DeviceInfo& device,
                                             const core::TimingOptions& timing,
                                             const std::string& cache_key, int64_t measured_ms);
  absl::Status FinishItemLocked(const ItemFinish& finish, const core::DeviceInfo& device,
                                const core::TimingOptions& timing);
  absl::StatusOr<core::JobRecord> CreateJobLocked(const core::JobRecord& job,
                                                  std::vector<core::WorkItem>& items);
  absl::Status SetJobStateLocked(int64_t job_id, core::JobState state, const std::string& error);

  std::mutex mutex_;
  std::unique_ptr<PgConnection> conn_;  // guarded by mutex_
  Options options_;
};

}  // namespace gemmprof::storage
