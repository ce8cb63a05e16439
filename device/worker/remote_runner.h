// device::Runner for a device whose runner lives in a worker process: gemmprofd
// re-executed in worker mode (device/worker/worker_main.h). A CUDA fault, a crash, an
// out-of-memory kill or a hang inside the worker costs the call in flight, never the
// daemon: it fails with the reason, the worker is killed if needed and restarted (the
// executor decides what to measure again: server/queue/job_executor.h). A MeasureGroup
// call is watched by its progress: one that makes no progress is hung, and a cancelled
// one is stopped at its next step boundary or killed. A worker that fails to start
// several times in a row makes the device unavailable until a later start succeeds.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "device/runner.h"
#include "device/worker/channel.h"
#include "gemmprof/v1/worker.pb.h"

namespace gemmprof::worker {

struct WorkerOptions {
  // The gemmprofd binary to re-execute, and what it needs to be a worker.
  std::string executable = "/proc/self/exe";
  std::string backend = "host";         // the worker's --backend: "cuda" or "host"
  int device = 0;                       // the worker's --device (CUDA ordinal)
  std::vector<std::string> extra_args;  // passed on, e.g. --log-file, --log-level
  std::vector<std::string> env;         // the worker's whole environment
  // Seconds an item may run before its worker is killed; 0 derives a bound per item
  // (ItemTimeoutSeconds).
  double item_timeout_s = 0;
  // Seconds a new worker has to report ready (CUDA and cuBLASLt initialization).
  double start_timeout_s = 120;
  // Start failures in a row after which the device is unavailable.
  int max_start_failures = 3;
  // While unavailable, a new start is tried after 1 s, then twice as long each time up
  // to this; the first that succeeds makes the device available again.
  double probe_interval_s = 20;
  // A cancelled MeasureGroup call that has not answered this long after the worker was
  // asked to stop has its worker killed.
  double cancel_grace_s = 2;
  // Delay before a restart: doubles with each failure in a row, up to the maximum.
  double first_backoff_s = 0.1;
  double max_backoff_s = 10;
  // CanImplement: how long it waits for a restarting worker, and for an answer.
  double query_wait_s = 30;
  double query_timeout_s = 10;
};

// Thread-safe as device::Runner requires: BeginJob and MeasureGroup from the
// device's one queue worker; Info, Supports, CanImplement and Availability from any
// thread. CanImplement travels on a channel of its own, answered by a second thread in
// the worker, so it never waits behind a running item or group.
class RemoteRunner final : public device::Runner {
 public:
  explicit RemoteRunner(WorkerOptions options);
  // Closes the worker's channels (it exits), kills it if it does not within 5 s, and
  // waits for the supervisor thread.
  ~RemoteRunner() override;
  RemoteRunner(const RemoteRunner&) = delete;
  RemoteRunner& operator=(const RemoteRunner&) = delete;

  // Starts the supervisor thread and returns once the first worker reported ready, or
  // the device is unavailable. Call once, before anything else.
  void Start();

  // What the first worker reported; a placeholder naming the device when none started.
  // Once a worker has started, its device; before (a device unavailable from the start)
  // a placeholder naming it. A reference stays valid for the runner's life.
  const core::DeviceInfo& Info() const override { return *info_.load(); }
  core::RecipeSupport Supports(core::Recipe recipe) const override;
  // Every item in one question to the worker's query thread. Unavailable when the
  // device is, or when no worker answered in time (restarting, or stuck); Internal when
  // the answers do not match the items.
  absl::StatusOr<std::vector<absl::Status>> CanImplement(
      const std::vector<core::WorkItem>& items, const core::TimingOptions& timing) const override;
  // BeginJob and MeasureGroup wait for a ready worker. A worker that dies or exceeds its
  // deadline fails the call: Aborted ("worker exited: signal 9 (Killed)") or
  // DeadlineExceeded ("timed out after 60 s"), each saying the worker restarts; a lost
  // device context fails it with the worker's error, saying so.
  absl::Status BeginJob(const core::TimingOptions& timing) override;
  // The worker's runner measures the group (its MeasureGroup); per-item refusals and
  // failures come back in the outcomes. Internal names the mismatch when the answer's
  // outcomes do not match the request's items. While the call runs, the worker's
  // heartbeats say how far it got (core/progress.h):
  //   * no step for NoProgressSeconds (item_deadline.h) is a hang: the worker is killed
  //     and the call fails DeadlineExceeded "hung: no progress for N s; ...", marked with
  //     the item whose group was in flight (core::InFlightItem) where one was;
  //   * GroupTimeoutSeconds stays the bound of the whole call ("timed out after N s");
  //   * when request.cancelled() turns true, the worker is asked to stop at its next step
  //     boundary (the call answers Cancelled); one that has not answered within
  //     cancel_grace_s is killed, and the call fails Cancelled saying so.
  absl::StatusOr<core::GroupResult> MeasureGroup(const core::GroupRequest& request) override;
  absl::Status Availability() const override;

  // Times a worker ended (crash, kill, timeout, context loss) and the supervisor went on
  // to start another: the device's restart count.
  int64_t restarts() const;
  // MeasureGroup calls found hung (no progress) and killed.
  int64_t hangs() const;
  // Seconds spent in calls on the run channel (BeginJob, MeasureGroup) since
  // Start: the device's busy time, from which rate() gives its busy fraction.
  double busy_seconds() const;
  // The ready worker's pid, 0 while none is.
  pid_t worker_pid() const;

 private:
  // One worker process and its two channels.
  struct Worker {
    pid_t pid = -1;
    MessageChannel run;
    MessageChannel query;
    bool exited = false;  // reaped; guarded by RemoteRunner::mu_
    std::string exit;     // how it ended, once exited
  };
  using WorkerPtr = std::shared_ptr<Worker>;

  void Supervise();
  WorkerPtr StartWorker(std::string* failure);
  bool SleepUnlessStopping(double seconds);
  void RecordExit(const WorkerPtr& w);
  void MarkUnavailable(const std::string& last_failure);
  // A ready worker other than `not_this`; waits `wait_s` (negative: until there is one,
  // the device is unavailable or the runner stops).
  absl::StatusOr<WorkerPtr> AwaitWorker(double wait_s, const WorkerPtr& not_this) const;
  // How a MeasureGroup call is watched.
  struct CallWatch {
    double setup_s = 0;               // the no-progress bound before the first round
    std::function<bool()> cancelled;  // may be empty
  };
  // One request on the run channel, with the failure handling described at BeginJob;
  // with `watch`, the call is watched as MeasureGroup says.
  absl::Status Call(const v1::worker::Request& request, double timeout_s,
                    v1::worker::Response* response, const CallWatch* watch = nullptr);
  // Reads the answer to a watched call `id` (see MeasureGroup). A hang or a cancel that
  // kills the worker sets *handled: the status is the call's, not the channel's.
  absl::Status AwaitWatched(const WorkerPtr& w, uint64_t id, double timeout_s,
                            const CallWatch& watch, v1::worker::Response* response, bool* handled);
  // Asks the worker (on its query channel) to stop call `request_id`.
  void SendCancel(const WorkerPtr& w, uint64_t request_id);
  absl::Status WorkerLost(const WorkerPtr& w, const absl::Status& io, double timeout_s);
  void Kill(const WorkerPtr& w) const;
  bool AwaitExit(const WorkerPtr& w, double wait_s) const;
  std::string DeviceName() const;

  const WorkerOptions options_;
  // Every description Info() has served, the placeholder first; only ever appended to
  // (under mu_), so references handed out stay valid. info_ points at the newest.
  std::deque<core::DeviceInfo> infos_;
  std::atomic<const core::DeviceInfo*> info_{nullptr};
  mutable std::atomic<uint64_t> next_request_id_{1};
  mutable std::mutex query_mu_;       // one CanImplement at a time on the query channel
  mutable std::mutex query_send_mu_;  // one Send at a time on the query channel
  mutable std::mutex mu_;             // everything below
  mutable std::condition_variable cv_;
  WorkerPtr worker_;      // the ready worker, null while none is
  WorkerPtr starting_;    // the worker being started, so a stop can end its wait
  bool started_ = false;  // the first start attempt cycle has settled
  bool unavailable_ = false;
  std::string unavailable_reason_;
  bool stopping_ = false;
  bool supervisor_done_ = false;
  int64_t restarts_ = 0;
  int64_t hangs_ = 0;
  int64_t starts_ = 0;       // worker starts tried, for GEMMPROF_WORKER_START
  int deaths_in_a_row_ = 0;  // reset by an answered call
  std::thread supervisor_;

  std::atomic<int64_t> busy_ns_{0};  // see busy_seconds()
};

}  // namespace gemmprof::worker
