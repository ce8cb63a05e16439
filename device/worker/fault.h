// Fault injection for tests of the worker path: GEMMPROF_WORKER_FAULT, read by each
// worker process (the daemon's environment passes on to its workers). Always compiled
// in, inert unless set. Not for production use.
//
// A fault @SEQ fires on the measurement group holding the item with that seq, when the
// runner begins that group's work (core/progress.h: Enter), so a fault in the middle of
// a batch meets the groups before it measured and the ones after it not started; refuse
// refuses that item alone, before the batch runs.
//
// Each per-item fault repeats (every worker that meets the item fires it: a
// deterministic fault) unless it ends in ":once" (only the first worker of this daemon
// that meets the item fires it: a transient fault, gone on the retry).
//
//   exit-at-start        exit with status 3 before reporting ready
//   exit-at-start:N      the same for the device's first N worker starts only (a device
//                        that comes back); the daemon numbers starts in
//                        GEMMPROF_WORKER_START
//   hang@SEQ             stop making progress there (the daemon's watchdog sees it): on
//                        the cuda backend a kernel that never ends, else a thread that
//                        never returns
//   crash@SEQ            abort() on it (signal 6)
//   kill@SEQ             SIGKILL itself on it (signal 9)
//   exit@SEQ             exit with status 3 on it
//   illegal-address@SEQ  run a kernel writing through a bad pointer instead (cuda only):
//                        a real sticky CUDA fault, after which the worker exits
//   context-lost@SEQ     answer the item as a sticky device fault would (any backend):
//                        the item fails "device context lost" and the worker exits
//   refuse@SEQ           refuse the item as not supported here (FailedPrecondition)
//                        without running it; the rest of its group is measured
//
// Several faults are separated by commas: "crash@2,hang@5:once".
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/status.h"

namespace gemmprof::worker {

inline constexpr char kFaultEnvVar[] = "GEMMPROF_WORKER_FAULT";
// Set by the daemon in each worker's environment: the device's worker start, from 1.
inline constexpr char kWorkerStartEnvVar[] = "GEMMPROF_WORKER_START";
// The exit status of the exit-at-start and exit@SEQ faults.
inline constexpr int kFaultExitStatus = 3;

struct WorkerFault {
  enum class Kind {
    kExitAtStart,
    kHang,
    kCrash,
    kKill,
    kExit,
    kIllegalAddress,
    kContextLost,
    kRefuse
  };
  Kind kind = Kind::kExitAtStart;
  int32_t seq = -1;    // the item it applies to; -1 for exit-at-start
  bool once = false;   // ":once": the first worker that meets the item only
  int32_t starts = 0;  // exit-at-start:N: the first N starts only; 0: every start
  // "kill@5:once", "exit-at-start:3": as written.
  std::string ToString() const;
};

// Parses a fault list. InvalidArgument naming the variable, the bad entry and the forms.
absl::StatusOr<std::vector<WorkerFault>> ParseWorkerFaults(const std::string& spec);

// The fault for item `seq`, if any.
std::optional<WorkerFault> FaultForItem(const std::vector<WorkerFault>& faults, int32_t seq);
// The first fault that meets a whole group of items `seqs` (in order): that of the first
// item with a fault other than refuse, if any. Its `seq` says which item it is.
std::optional<WorkerFault> FaultForGroup(const std::vector<WorkerFault>& faults,
                                         const std::vector<int32_t>& seqs);
// Whether item `seq` is to be refused (refuse@SEQ).
bool Refuses(const std::vector<WorkerFault>& faults, int32_t seq);
// Whether a worker at start number `start` (1, 2, ...) exits at start.
bool ExitsAtStart(const std::vector<WorkerFault>& faults, int64_t start);

// Whether `fault` fires now: always for a repeating fault; for a ":once" fault, only the
// first time any worker of the daemon whose pid is `daemon_pid` asks (a marker file in
// `state_dir` records it; a marker that cannot be made counts as fired, so a broken
// state directory never repeats a transient fault).
bool ClaimFault(const WorkerFault& fault, const std::string& state_dir, int64_t daemon_pid);

}  // namespace gemmprof::worker
