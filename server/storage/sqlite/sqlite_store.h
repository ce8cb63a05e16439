// ResultStore on an embedded SQLite database (DESIGN.md, "Storage").
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "server/storage/result_store.h"
#include "server/storage/sqlite/sqlite_connection.h"

namespace gemmprof::storage {

// One database file, one connection, one mutex: every call takes the mutex for its
// whole duration, so calls are serialized and each sees a consistent database. That is
// simple and plenty fast for a daemon whose writes come once per benchmarked GEMM.
//
// Durability: WAL journal with synchronous=FULL, so each committed transaction (a job
// with its items, an item with its result) is on disk when the call returns; it
// survives a kill -9 and a power loss.
//
// Thread-safety: all methods may be called concurrently from any thread.
// Errors (besides those documented on ResultStore): Unavailable when the file stays
// locked by another process past the busy timeout and retries, DataLoss when a stored
// JSON column cannot be decoded, Internal for other SQLite failures.
class SqliteStore : public ResultStore {
 public:
  struct Options {
    // Wall clock in unix epoch milliseconds; tests replace it to control time.
    std::function<int64_t()> now_ms;
    // false selects synchronous=NORMAL: a commit then survives a kill -9 but not a
    // power loss. Only for throwaway databases (benchmarks filling 100k rows).
    bool fsync_each_commit = true;
    // This daemon's node name (StoreOptions::node), stamped on its jobs and results.
    std::string node;
  };

  // Opens or creates the database at `path` (":memory:" for a private in-memory one)
  // and migrates it to the current schema. Errors: FailedPrecondition when the file was
  // written by a newer gemmprof (schema version too high), DataLoss when it is not a
  // SQLite database, Internal / Unavailable when it cannot be opened.
  static absl::StatusOr<std::unique_ptr<SqliteStore>> Open(const std::string& path);
  static absl::StatusOr<std::unique_ptr<SqliteStore>> Open(const std::string& path,
                                                           Options options);

  SqliteStore(const SqliteStore&) = delete;
  SqliteStore& operator=(const SqliteStore&) = delete;
  ~SqliteStore() override = default;

  // ResultStore. Beyond the interface's comments:
  // - CreateJob numbers items' seq 0, 1, 2, ... in the given order; created_ms is kept
  //   when non-zero, otherwise set to now.
  // - SetJobState: a terminal job does not change state again (FailedPrecondition),
  //   except that setting the same terminal state again is accepted and does nothing.
  // - MarkItemRunning: NotFound for an unknown item, FailedPrecondition unless queued.
  // - FinishItem: `status` must be final (InvalidArgument), the item must not already
  //   be final (FailedPrecondition). kDone needs a measurement or cached_result_id
  //   (InvalidArgument); a measurement is only accepted with kDone or kFailed. With
  //   cached_result_id the item points at that result (NotFound when it does not
  //   exist) and no row is written. measured_ms of a new result is now.
  // - FinishItems: FinishItem's rules for every item; the first error rolls back all.
  // - LookupCache only considers results whose own item finished kDone.
  // - RecoverUnfinished also takes the jobs stored before nodes were recorded (node ''):
  //   only a single daemon's file can hold them.
  // - QueryResults lists result rows (cached items are not rows of their own), newest
  //   first by insertion order; page_token is opaque.
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

 private:
  SqliteStore(Connection conn, Options options);

  // The *Locked helpers expect mutex_ held.
  absl::StatusOr<core::JobRecord> GetJobLocked(int64_t job_id);
  absl::Status RequireJobLocked(int64_t job_id);
  absl::StatusOr<int64_t> InsertResultLocked(int64_t item_id, const core::Measurement& measurement,
                                             const core::DeviceInfo& device,
                                             const core::TimingOptions& timing,
                                             const std::string& cache_key, int64_t measured_ms);
  // FinishItem's work inside the caller's transaction.
  absl::Status FinishItemLocked(const ItemFinish& finish, const core::DeviceInfo& device,
                                const core::TimingOptions& timing);
  // The id of the `contexts` row holding this JSON, inserted when new.
  absl::StatusOr<int64_t> ContextIdLocked(std::string_view kind, const std::string& json);
  int64_t NowMs() const;

  std::mutex mutex_;
  Connection conn_;  // guarded by mutex_
  Options options_;
};

}  // namespace gemmprof::storage
