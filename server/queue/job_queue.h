// The persistent job queue: validates and persists submissions, schedules jobs onto
// one worker per device, spreads a running job's groups over the idle devices of its
// model, cancels at group boundaries, resumes unfinished jobs after a restart.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <thread>
#include <vector>

#include "core/job.h"
#include "core/placement.h"
#include "core/status.h"
#include "device/runner.h"
#include "server/queue/job_events.h"
#include "server/queue/job_executor.h"
#include "server/storage/result_store.h"

namespace gemmprof::queue {

// What a submission would run.
struct PlannedJob {
  core::Plan plan;
  std::vector<core::RecipeVariant> recipes;  // whole recipes, then variants
  std::vector<core::Mode> modes;
  std::vector<core::WorkItem> items;
  core::DeviceInfo device;  // the device the checks ran on
  // That device's answer for each of `items` (Runner::CanImplement) and its index: the
  // job's lead on it takes the answer instead of asking again.
  size_t device_index = 0;
  std::vector<absl::Status> fits;
  // A job of the cluster queue (where is not this-node): what its batches may run on,
  // and how many devices of that model the cluster serves with (its batches' count).
  std::optional<storage::ClusterTarget> target;
  int cluster_devices = 0;
};

// True when a Runner::CanImplement refusal means "this recipe cannot run this shape
// here" (the item becomes not_supported) rather than "the submission is wrong".
bool IsNotSupportedRefusal(const absl::Status& status);

// Largest number of items one job may have: the ceiling of --max-items-per-job.
inline constexpr int64_t kMaxItemsPerJob = 100000;
// Ceiling of --max-queued-jobs.
inline constexpr int64_t kMaxQueuedJobsCeiling = 1000000;

// What one daemon accepts. Checked by Plan (items) and Submit (both).
struct QueueLimits {
  int64_t max_queued_jobs = 1000;               // queued + running jobs; --max-queued-jobs
  int64_t max_items_per_job = kMaxItemsPerJob;  // --max-items-per-job
  // This daemon's node (gemmprofd --node). In a store several daemons share, a job of
  // another node is that daemon's to cancel and to follow (CheckOwnJob).
  std::string node;
  // Measurement groups timed in one set of rounds (PackBatches); --batch-groups.
  size_t batch_groups = kDefaultBatchGroups;
  // The cluster queue (a PostgreSQL store): how long a claimed batch stays leased
  // without a renewal (--lease-seconds), and how often an idle device looks for one.
  int64_t lease_ms = 30000;
  int64_t claim_poll_ms = 1000;
};

// What this daemon did with the cluster queue's batches since it started, and the
// queue's state right now (for /metrics).
struct ClusterStats {
  int64_t claimed = 0;   // batches claimed
  int64_t rerun = 0;     // of those, batches whose previous holder's lease had lapsed
  int64_t finished = 0;  // batches measured to their end
  int64_t released = 0;  // batches given back unmeasured (stop, drain, device lost, failure)
  int64_t lost = 0;      // leases lost while measuring (lapsed: another node took over)
  std::optional<storage::ClusterQueueCounts> queue;  // every node's; nullopt: no cluster queue
};

// How many of this daemon's jobs wait and run now (for /metrics).
struct QueueCounts {
  int64_t queued = 0;
  int64_t running = 0;
};

// Thread-safe. Owns the worker threads; the store and runners must outlive it.
class JobQueue {
 public:
  JobQueue(storage::ResultStore& store, std::vector<device::Runner*> runners,
           QueueLimits limits = {});
  ~JobQueue();
  JobQueue(const JobQueue&) = delete;
  JobQueue& operator=(const JobQueue&) = delete;

  // Batches, or parts of one, device `device` measured again after a worker fault.
  int64_t Retries(size_t device) const;

  // Re-queues unfinished jobs from the store and starts one worker per runner.
  absl::Status Start();
  // No new jobs and no new items; returns at once. Idempotent.
  void RequestStop();
  // RequestStop, then waits for each worker to finish its current item. Idempotent.
  void Stop();

  // Validates (InvalidArgument naming the field; spec.devices must be distinct indexes
  // of this node's devices), derives the GEMMs, checks that every item of a supported
  // recipe fits the first available device the job may use, persists job and items,
  // and queues it. `submitted_by` (a token name, may be empty) is stored with the job.
  // Returns the stored job. Unavailable while stopping, and when no device is available
  // (the message names each device's reason); ResourceExhausted when max_queued_jobs
  // jobs are already queued or running, or the job has more than max_items_per_job items.
  absl::StatusOr<core::JobRecord> Submit(const core::JobSpec& spec,
                                         const std::string& submitted_by = "");
  // The same checks as Submit but the queue length; nothing stored or run.
  absl::StatusOr<PlannedJob> Plan(const core::JobSpec& spec) const;
  // Queued jobs end at once; a running job stops at its measurement's next round (a
  // worker that does not stop within 2 s is killed: worker/remote_runner.h).
  // NotFound for unknown ids, FailedPrecondition for jobs already ended.
  absl::StatusOr<core::JobRecord> Cancel(int64_t job_id);

  // FailedPrecondition when `job` belongs to another node of a shared store: its
  // events and its cancellation live with the daemon that runs it.
  absl::Status CheckOwnJob(const core::JobRecord& job, const char* what) const;

  // Every device, unavailable ones marked with their reason.
  std::vector<core::DeviceInfo> Devices() const;
  // Jobs waiting for a worker and jobs a worker runs, right now.
  QueueCounts Counts() const;
  // Devices leading or helping a job right now.
  int32_t BusyDevices() const;
  ClusterStats Cluster() const;
  // Drain (gemmprofd --drain, SIGUSR1): claims no more cluster batches and starts no
  // more local jobs; what the devices hold runs to its end. Drained() is true once
  // no device holds anything; queued local jobs stay queued for a restart.
  void RequestDrain();
  bool Drained() const;
  JobEventBus& events() { return events_; }
  storage::ResultStore& store() { return store_; }

 private:
  // What a worker does next: nothing (stop), lead a queued job, or help a running one.
  struct Work {
    int64_t lead = 0;
    std::shared_ptr<JobShare> help;
    bool claim = false;  // look for a batch of the cluster queue
  };

  absl::Status CheckDevices(const std::vector<int32_t>& devices) const;
  // The queued job record of a submission (Submit and SubmitClustered store it).
  static core::JobRecord NewJobRecord(const core::JobSpec& spec, const std::string& submitted_by,
                                      const PlannedJob& planned);
  // Fills planned->device, device_index and fits from the first device that can run it.
  absl::Status CheckFits(const core::JobSpec& spec, PlannedJob* planned) const;
  // The fit answers Submit got for `job_id`, once, when `index` is the device that gave
  // them (the lead of the job ends them otherwise, when it ends the job).
  std::optional<std::vector<absl::Status>> TakeSubmitFits(int64_t job_id, size_t index);
  absl::StatusOr<core::JobRecord> EndUnstarted(int64_t job_id);
  void GiveBack(int64_t job_id);
  // Device `index` starts (with NextWork) or ends work on a job.
  void SetBusy(size_t index, bool busy);
  // Blocks until there is work for device `index` or the queue stops (false).
  // `declined`: jobs this device helped with already; ended shares leave it.
  bool NextWork(size_t index, std::set<int64_t>& declined, Work* work);
  // True once `runner` is available (at once when it is); false when the queue stops
  // first.
  bool AwaitAvailable(const device::Runner& runner);
  // With mu_ held: the oldest running job device `index` may help with (not one of
  // `declined`), or the first queued job it may lead.
  bool FindWorkLocked(size_t index, const std::set<int64_t>& declined, Work* work);
  void Enqueue(int64_t job_id, std::vector<int32_t> devices);
  Interrupt Poll(size_t index, int64_t job_id);

  // The cluster queue (cluster_work.cc).
  // `where` with the store's default resolved: any on a shared store, this-node else.
  core::Placement EffectivePlacement(const core::Placement& where) const;
  // The model and node a clustered job's batches run on; FailedPrecondition naming the
  // cluster's device models (or nodes) when no serving daemon has it.
  absl::Status ResolveTarget(const core::Placement& where, PlannedJob* planned) const;
  absl::StatusOr<core::JobRecord> SubmitClustered(const core::JobSpec& spec,
                                                  const std::string& submitted_by,
                                                  PlannedJob planned);
  absl::StatusOr<core::JobRecord> CancelClustered(const core::JobRecord& job);
  // Claims one batch for device `index` and measures it; false when none was claimable.
  bool RunClaimed(size_t index, JobExecutor& executor);
  // Publishes the progress of watched cluster jobs, read from the store, to their
  // watch streams (their batches run on any node).
  void FollowLoop();
  void WorkerLoop(size_t index);

  storage::ResultStore& store_;
  std::vector<device::Runner*> runners_;
  const QueueLimits limits_;
  JobEventBus events_;

  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<int64_t> pending_;
  std::map<int64_t, std::vector<int32_t>> pinned_;       // queued jobs' spec.devices, when set
  std::map<int64_t, std::shared_ptr<JobShare>> shares_;  // running jobs others may help with
  std::set<int64_t> running_;
  std::vector<char> busy_;        // per runner: leading or helping a job now
  std::vector<int64_t> retries_;  // per runner: Retries()
  std::set<int64_t> cancel_requested_;
  // Submit's fit answers of queued jobs: device index and one status per item.
  std::map<int64_t, std::pair<size_t, std::vector<absl::Status>>> submit_fits_;
  int64_t submitting_ = 0;        // Submit calls past the queue-length check, not yet enqueued
  std::vector<char> claim_now_;   // per runner: look for a cluster batch at once
  std::vector<char> lease_lost_;  // per runner: the batch it measures is no longer its own
  ClusterStats cluster_;          // counters only (queue is read by Cluster())
  bool draining_ = false;
  std::thread follower_;
  bool stopping_ = false;
  bool started_ = false;
  std::vector<std::thread> workers_;
};

}  // namespace gemmprof::queue
