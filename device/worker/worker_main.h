// The worker process's side: gemmprofd re-executed with --worker-fd (see daemon.cc) owns
// one device's runner, and with it the device's CUDA context, for the daemon.
#pragma once

#include <functional>
#include <memory>

#include "core/status.h"
#include "device/runner.h"

namespace gemmprof::worker {

// Exit statuses of a worker process besides 0 (the daemon closed the run channel) and
// the fault hook's kFaultExitStatus.
inline constexpr int kExitRunnerFailed = 1;  // the runner could not be created
inline constexpr int kExitBadFault = 2;      // GEMMPROF_WORKER_FAULT does not parse
inline constexpr int kExitContextLost = 4;   // a sticky device error: a fresh process is needed

struct WorkerHooks {
  // Creates the device's runner in this process.
  std::function<absl::StatusOr<std::unique_ptr<device::Runner>>()> make_runner;
  // The illegal-address fault: makes the device fault as a kernel writing through a bad
  // pointer does. Null where the backend has no such fault (host).
  std::function<absl::Status()> illegal_address;
  // The hang fault on a GPU: launches a kernel that never ends and waits for it (never
  // returns while the kernel runs). Null where the backend has none (host): the worker's
  // thread then just stops.
  std::function<absl::Status()> hang;
};

// The worker's main loop. Reads GEMMPROF_WORKER_FAULT (device/worker/fault.h), creates
// the runner, sends Hello on the run channel (the device, or why there is none), then
// answers CanImplement and Cancel on the query channel from a second thread and BeginJob
// and MeasureGroup on the run channel, one at a time, until the daemon closes the run
// channel. A MeasureGroup call sends its progress as heartbeats while it runs. After an answer
// whose status is marked context-lost it exits at once with kExitContextLost. Takes ownership of
// both descriptors. Returns the process exit status.
int RunWorker(int run_fd, int query_fd, const WorkerHooks& hooks);

}  // namespace gemmprof::worker
