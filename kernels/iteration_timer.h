// Times one iteration of device work, sample by sample, free of launch overhead:
//  * the iteration is captured once into a CUDA graph, so a sample is one graph launch
//    (one host call however many kernels the iteration has);
//  * each batch of samples is enqueued behind a kernel that holds the stream until the
//    host has enqueued the whole batch (nvbench's "blocking kernel"), so the GPU never
//    waits on the CPU between a sample's start and stop events;
//  * with a cold L2, a 2x-L2-sized buffer is written before each sample's start event,
//    outside the timed window.
#pragma once

#include <cuda_runtime_api.h>

#include <functional>
#include <string>
#include <vector>

#include "kernels/device_pool.h"

namespace gemmprof::kernels {

struct TimerOptions {
  int32_t warmup_iters = 10;
  int32_t timed_iters = 100;
  void* flush_buffer = nullptr;  // cold L2 when set
  size_t flush_bytes = 0;
  // Called once the warm-up has finished, just before the first timed sample is
  // enqueued (e.g. to start telemetry over the timed samples only). Nullable.
  std::function<void()> before_samples;
};

struct TimerResult {
  std::vector<double> samples_ms;
  std::string notes;  // e.g. the blocking kernel timed out (samples may include launch gaps)
};

class IterationTimer {
 public:
  // Pinned host flag for the blocking kernel. Internal on failure.
  static absl::StatusOr<IterationTimer> Create();

  // Captures `iteration` into a graph, runs the warm-up, then the timed samples.
  absl::StatusOr<TimerResult> Time(cudaStream_t stream,
                                   const std::function<absl::Status(cudaStream_t)>& iteration,
                                   const TimerOptions& options) const;

 private:
  absl::Status TimeBatch(cudaStream_t stream, const CudaGraphExec& graph, int count,
                         const TimerOptions& options, TimerResult* result) const;
  PinnedHostBuffer flag_;  // [0] release flag, [1] timed-out marker
  int32_t* flag_device_ = nullptr;
};

}  // namespace gemmprof::kernels
