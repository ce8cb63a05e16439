// Runs one job's items, in order, on one device: result cache, not-supported items,
// measurement, persistence of every outcome, progress events.
#pragma once

#include <cstdint>
#include <functional>

#include "server/device/runner.h"
#include "server/queue/job_events.h"
#include "server/storage/result_store.h"

namespace gemmprof::queue {

// What the executor should do at the next item boundary.
enum class Interrupt { kNone, kCancel, kStop };

// How JobExecutor::Run left a job.
enum class RunEnd {
  kEnded,       // in a terminal state (or it already was, or it could not be loaded)
  kStopped,     // unfinished after a stop request; it resumes after a restart
  kDeviceLost,  // the device became unavailable before the job's end: queue it elsewhere
};

// Not thread-safe; one executor per worker thread.
class JobExecutor {
 public:
  // `interrupt` is polled between items: kCancel ends the job cancelled, kStop leaves it
  // unfinished in the store (it resumes after a restart).
  JobExecutor(storage::ResultStore& store, JobEventBus& bus, device::Runner& runner,
              std::function<Interrupt(int64_t job_id)> interrupt);

  // Runs every item of the job that is not final yet. A job that runs to its end is
  // succeeded, or partial when any item failed ("3 of 96 items failed"; not_supported
  // items do not count). A failed item's error names the item, what failed and what
  // happens next; the source location of the error goes to the log only. Store failures
  // end the job as failed when possible; nothing is thrown.
  RunEnd Run(int64_t job_id);

 private:
  enum class ItemEnd { kRecorded, kDeviceLost };

  absl::Status WarmUp(const core::JobRecord& job);
  // Runs one item and records its outcome; `last`: no item of the job comes after it.
  absl::StatusOr<ItemEnd> RunItem(const core::JobRecord& job, const core::ItemRecord& item,
                                  bool last);
  absl::Status FinishFailed(const core::JobRecord& job, const core::ItemRecord& item,
                            const absl::Status& why, bool last, const std::string& cache_key);
  void EndRanToTheEnd(int64_t job_id);
  absl::Status Finish(const core::JobRecord& job, const core::ItemRecord& item,
                      core::ItemStatus status, const std::string& error,
                      const std::optional<core::Measurement>& m,
                      std::optional<int64_t> cached_result_id, const std::string& cache_key);
  void PublishItem(JobEvent::Kind kind, int64_t job_id, const core::ItemRecord& item);
  void EndJob(int64_t job_id, core::JobState state, const std::string& error);

  storage::ResultStore& store_;
  JobEventBus& bus_;
  device::Runner& runner_;
  std::function<Interrupt(int64_t)> interrupt_;
};

}  // namespace gemmprof::queue
