// Fault injection for tests of the worker path: GEMMPROF_WORKER_FAULT, read by each
// worker process (the daemon's environment passes on to its workers). Always compiled
// in, inert unless set. Not for production use.
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
  enum class Kind { kExitAtStart, kHang, kCrash, kKill, kExit, kIllegalAddress, kContextLost };
  Kind kind = Kind::kExitAtStart;
  int32_t seq = -1;  // the item it applies to; -1 for exit-at-start
};

// Parses a fault list. InvalidArgument naming the variable, the bad entry and the forms.
absl::StatusOr<std::vector<WorkerFault>> ParseWorkerFaults(const std::string& spec);

// The fault for item `seq`, if any.
std::optional<WorkerFault> FaultForItem(const std::vector<WorkerFault>& faults, int32_t seq);
// Whether the list holds exit-at-start.
bool ExitsAtStart(const std::vector<WorkerFault>& faults);

}  // namespace gemmprof::worker
