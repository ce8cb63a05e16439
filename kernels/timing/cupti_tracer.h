// Kernel-only timing from CUPTI's activity API (TimingOptions.timing_backend kKernels):
// the device's own start/end timestamps of every kernel, so launch and graph gaps never
// count. CUPTI is loaded at run time ($GEMMPROF_CUPTI_LIBRARY, else libcupti.so.13 from
// the node's CUDA toolkit, the copy the bundle carries, or the toolkit's extras/CUPTI),
// so a node without it still measures with events and refuses only `--timing kernels`,
// saying why.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/status.h"

namespace gemmprof::kernels {

// One kernel the device ran: its short name and duration.
struct KernelRecord {
  std::string name;
  uint64_t start_ns = 0, end_ns = 0;
};

// The process's CUPTI activity collection. One session at a time (Begin .. End) per
// process; the daemon runs one GPU per worker process, so sessions never overlap there.
// Not thread-safe: Begin, Mark and End are called from the thread that launches.
class CuptiTracer {
 public:
  // The loaded tracer, or FAILED_PRECONDITION saying why kernel-only timing cannot run
  // here (library missing, wrong version, symbols absent). Loads once per process.
  static absl::StatusOr<CuptiTracer*> Get();
  // Whether the CUPTI at `path` (a dlopen name or path) could serve, without loading it
  // for collection: OK, or the FAILED_PRECONDITION that Get() would give for it.
  static absl::Status CheckLoadable(const std::string& path);

  // Starts collecting kernel records; FAILED_PRECONDITION when CUPTI refuses (e.g. a
  // profiler such as Nsight already holds it).
  absl::Status Begin();
  // Tags the CUDA calls made between Mark(id) and Unmark() with `id` (> 0).
  absl::Status Mark(uint64_t id);
  absl::Status Unmark();
  // Waits for the device (the caller synchronizes its stream first), stops collecting
  // and returns the kernels of each tagged id in start order. Untagged kernels (an L2
  // flush, other work) are dropped.
  absl::StatusOr<std::map<uint64_t, std::vector<KernelRecord>>> End();

  struct Api;  // the resolved CUPTI entry points (cupti_tracer.cc)

 private:
  CuptiTracer() = default;
  Api* api_ = nullptr;
  bool active_ = false;
};

// A kernel's name as a report shows it: demangled, without return type, namespaces of
// this project, or parameter list; at most 80 characters.
std::string ShortKernelName(const char* mangled);

}  // namespace gemmprof::kernels
