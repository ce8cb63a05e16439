// Runs one job's items, measurement group by measurement group (core/group.h): result
// cache, not-supported items, interleaved measurement of a group in one runner call,
// persistence of every outcome, progress events. The executor of the job's own device
// (the lead) shares the job's groups (JobShare) with idle devices of the same model,
// whose executors Help.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "device/runner.h"
#include "server/queue/job_events.h"
#include "server/queue/job_share.h"
#include "server/storage/result_store.h"

namespace gemmprof::queue {

// What the executor should do at the next batch boundary.
enum class Interrupt { kNone, kCancel, kStop };

// How JobExecutor::Run left a job.
// How long a job waits for an unavailable store before its items fail.
inline constexpr double kStoreRetrySeconds = 600;

enum class RunEnd {
  kEnded,       // in a terminal state (or it already was, or it could not be loaded)
  kStopped,     // unfinished after a stop request; it resumes after a restart
  kDeviceLost,  // the device became unavailable before the job's end: queue it elsewhere
};

// How a lead offers its job to other devices: `publish` when the groups are ready,
// `withdraw` once no group of it is in flight any more. Either may be empty.
struct ShareHooks {
  std::function<void(std::shared_ptr<JobShare>)> publish;
  std::function<void(int64_t job_id)> withdraw;
  // How many devices of the node may work on a job of `scope`, the lead included (how
  // many batches its groups are packed into at least); empty: 1.
  std::function<int(const DeviceScope& scope)> devices;
  // Measurement groups per batch (PackBatches).
  size_t batch_groups = kDefaultBatchGroups;
  // The answer this device gave when the job was submitted (one status per item, in the
  // order of the job's items), if it did: the lead takes it instead of asking again.
  // Empty, or nullopt: the executor asks.
  std::function<std::optional<std::vector<absl::Status>>(int64_t job_id)> submit_fits;
  // Called each time a batch (or part of one) is measured again after a worker fault
  // (the retries counter of /metrics). May be empty.
  std::function<void()> retried;
};

// Not thread-safe; one executor per worker thread.
class JobExecutor {
 public:
  // `interrupt` is polled between groups: kCancel ends the job cancelled, kStop leaves it
  // unfinished in the store (it resumes after a restart).
  JobExecutor(storage::ResultStore& store, JobEventBus& bus, device::Runner& runner,
              std::function<Interrupt(int64_t job_id)> interrupt, ShareHooks hooks = {});

  // Runs every item of the job that is not final yet, in measurement groups
  // (core::GroupItems) packed into batches (PackBatches), the largest first; a batch's
  // items that need measuring are measured together in one set of interleaved rounds; a
  // group's items are answered from the cache
  // together when every one of them hits one measurement group. A job that runs to its end is
  // succeeded, or partial when any item failed ("3 of 96 items failed"; not_supported
  // items do not count). A failed item's error names the item, what failed and what
  // happens next; the source location of the error goes to the log only. Store failures
  // end the job as failed when possible; nothing is thrown.
  RunEnd Run(int64_t job_id);
  // Measures groups of a job another device leads, until none is left to take, the job
  // is interrupted, or this device goes away (its group in flight goes back to the
  // share). The lead ends the job; a helper whose warm-up fails just does not help.
  void Help(JobShare& share);

  // How RunBatch left a batch of the cluster queue.
  enum class BatchEnd {
    kDone,        // every item recorded
    kStopped,     // interrupted (stop, drain-free stop, lease lost): it was not finished
    kDeviceLost,  // this device went away: another device takes the batch
    kFailed,      // warm-up or the store failed; `why` says which
  };
  // Measures the items `item_ids` of job `job_id` (a batch this daemon claimed from the
  // cluster queue): like Help, with its own share of one batch. Events go to observers
  // only (a cluster job's watchers follow the store, ClusterFollower). The GPU warm-up
  // runs unless this executor ended a batch of the same job moments ago.
  BatchEnd RunBatch(int64_t job_id, const std::vector<int64_t>& item_ids, std::string* why);
  // Marks batch `batch_id` of job `job_id`, measured, done in the cluster queue, waiting
  // out a store outage as the job's own writes do; true when it was the job's last open
  // batch (then Conclude it).
  absl::StatusOr<bool> FinishBatch(int64_t job_id, int64_t batch_id);
  // Ends a cluster job whose last batch this executor finished: succeeded, or partial.
  void Conclude(int64_t job_id);

 private:
  enum class ItemEnd { kRecorded, kDeviceLost };
  enum class LoopEnd { kDone, kStop, kCancel, kDeviceLost };

  absl::Status WarmUp(const core::JobRecord& job);
  // Whether each item of `share` can run on this device: the answer the device gave at
  // submission (ShareHooks::submit_fits), else asked of the runner once per job, in one
  // question; where the question fails (Unavailable: the worker is
  // restarting), its status is every item's answer, and it is asked again next time.
  const std::vector<absl::Status>& Fits(const JobShare& share);
  // Takes batches from `share` and runs them until one of LoopEnd happens. A store
  // failure closes the share with its reason.
  LoopEnd RunGroups(JobShare& share);
  // Settles each measurement group of `batch` (indexes into share.items()), then measures
  // what is left of all of them in one MeasureGroup call.
  absl::StatusOr<ItemEnd> RunGroup(JobShare& share, const std::vector<size_t>& batch);
  // Settles the items of `group` (one GroupKey) that need no measuring: not supported,
  // refused (Fits), or answered from the cache as a group. Appends the rest, with their cache
  // keys, to `measure` and `keys`.
  absl::StatusOr<ItemEnd> SettleGroup(JobShare& share, const std::vector<size_t>& group,
                                      std::vector<size_t>* measure, std::vector<std::string>* keys);
  // Finishes every item of `group` as cached when each one hits and all hits come from
  // one measurement group; false (nothing recorded) otherwise.
  absl::StatusOr<bool> ServeFromCache(JobShare& share, const std::vector<size_t>& group,
                                      const std::vector<std::string>& keys);
  // ITEM_STARTED per item, then MeasureAttempt with the job's retries.
  absl::Status MeasureGroup(JobShare& share, const std::vector<size_t>& group,
                            const std::vector<std::string>& keys);
  // One MeasureGroup call for `group` (a batch or part of one), the outcomes recorded in
  // one transaction; a cancel during the call records its items cancelled. A worker
  // fault (died, hung, context lost) goes to Retry. `retried_after` is the fault that
  // made this a retry ("" for the first attempt): retried items say so in their notes.
  absl::Status MeasureAttempt(JobShare& share, const std::vector<size_t>& group,
                              const std::vector<std::string>& keys, int retries_left,
                              const std::string& retried_after);
  // After `fault` (docs/measurement.md "Faults"): a group named in flight (a hang) fails
  // and the rest is measured again; otherwise the whole batch again while retries are
  // left; a fault that comes back on a retry halves the batch by measurement group, each
  // part measured once, until the group that brings it fails alone, "reproduced on
  // retry". With --retries 0 the batch's items fail at the first fault.
  absl::Status Retry(JobShare& share, const std::vector<size_t>& group,
                     const std::vector<std::string>& keys, int retries_left,
                     const std::string& retried_after, const absl::Status& fault);
  // The final status and error text of an item that `why` stopped (logged here).
  storage::ItemFinish Failure(const core::JobRecord& job, const core::ItemRecord& item,
                              const absl::Status& why, bool last, const std::string& cache_key);
  void EndRanToTheEnd(int64_t job_id);
  absl::Status Finish(JobShare& share, const core::ItemRecord& item, core::ItemStatus status,
                      const std::string& error, const std::string& cache_key);
  // Records `finishes` (of share.items()[group[i]], same order) in one transaction, then
  // publishes an event per item.
  absl::Status FinishAll(JobShare& share, const std::vector<size_t>& group,
                         const std::vector<storage::ItemFinish>& finishes);
  void PublishItem(JobEvent::Kind kind, int64_t job_id, const core::ItemRecord& item);
  void EndJob(int64_t job_id, core::JobState state, const std::string& error);
  // Calls `call` (a store call) again while it fails with Unavailable — a shared
  // PostgreSQL server that went away — for up to kStoreRetrySeconds, or until a stop is
  // requested: the measurements in hand are not lost to an outage.
  template <typename Call>
  auto WithStoreRetry(int64_t job_id, const Call& call) -> decltype(call());

  storage::ResultStore& store_;
  JobEventBus& bus_;
  device::Runner& runner_;
  std::function<Interrupt(int64_t)> interrupt_;
  ShareHooks hooks_;
  // Fits of the job asked last (fits_job_), one per item of its share; not
  // fits_answered_: the question failed, and its status stands for every item.
  int64_t fits_job_ = 0;
  bool fits_answered_ = false;
  std::vector<absl::Status> fits_;
  // Who hears this executor's events (observers only while it runs a cluster batch).
  JobEventBus::Audience audience_ = JobEventBus::Audience::kAll;
  // The cluster job whose batch ended last and when: the GPU is still warm for it.
  int64_t warm_job_ = 0;
  std::chrono::steady_clock::time_point warm_since_;
};

}  // namespace gemmprof::queue
