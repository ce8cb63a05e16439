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

// Not thread-safe; one executor per worker thread.
class JobExecutor {
 public:
  // `interrupt` is polled between items: kCancel ends the job cancelled, kStop leaves it
  // unfinished in the store (it resumes after a restart).
  JobExecutor(storage::ResultStore& store, JobEventBus& bus, device::Runner& runner,
              std::function<Interrupt(int64_t job_id)> interrupt);

  // Runs every item of the job that is not final yet. Store failures end the job
  // as failed when possible; nothing is thrown.
  void Run(int64_t job_id);

 private:
  // Runs one item and records its outcome.
  absl::Status RunItem(const core::JobRecord& job, const core::ItemRecord& item);
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
