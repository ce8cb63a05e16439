// Fault injection for tests of the worker path: GEMMPROF_WORKER_FAULT, read by each
// worker process (the daemon's environment passes on to its workers). Always compiled
// in, inert unless set. Not for production use.
//
// A fault @SEQ fires on the measurement group (MeasureGroup) holding the item with that
// seq: every fault but refuse meets the whole group, before any of it runs; refuse
// refuses that item alone.
//
//   exit-at-start        exit with status 3 before reporting ready
//   hang@SEQ             never answer the item with that seq (the daemon times it out)
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
// Several faults are separated by commas: "crash@2,hang@5".
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/status.h"

namespace gemmprof::worker {

inline constexpr char kFaultEnvVar[] = "GEMMPROF_WORKER_FAULT";
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
  int32_t seq = -1;  // the item it applies to; -1 for exit-at-start
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
// Whether the list holds exit-at-start.
bool ExitsAtStart(const std::vector<WorkerFault>& faults);

}  // namespace gemmprof::worker
