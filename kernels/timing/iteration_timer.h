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

#include "kernels/cuda/device_pool.h"

namespace gemmprof::kernels {

// Tags each timed launch of a sample (not warm-ups, rewarms or flushes): Mark before it,
// Unmark after, in enqueue order; e.g. so CUPTI's kernel records name their sample.
class LaunchTagger {
 public:
  virtual ~LaunchTagger() = default;
  // Before the timed launch of one sample of visits[visit].
  virtual absl::Status Mark(int32_t visit) = 0;
  virtual absl::Status Unmark() = 0;
};

struct TimerOptions {
  int32_t warmup_iters = 10;
  int32_t timed_iters = 100;
  void* flush_buffer = nullptr;  // cold L2 when set: written before each sample
  size_t flush_bytes = 0;
  // Read instead of written (L2Policy::kClean): the flush leaves no dirty line for the
  // sample to write back.
  bool flush_by_reading = false;
  // Called once the warm-up has finished, just before the first timed sample is
  // enqueued (e.g. to start telemetry over the timed samples only). Nullable.
  std::function<void()> before_samples;
  LaunchTagger* tagger = nullptr;  // nullable
};

// `samples` consecutive timed launches of one captured graph (ms per launch / repeat);
// `rewarm`: one untimed launch first, so a hot-L2 figure is not taken right after
// another unit evicted this one's operands.
struct Visit {
  const CudaGraphExec* graph = nullptr;
  int32_t samples = 1;
  int32_t repeat = 1;  // iterations the graph holds back to back: samples are divided by it
  bool rewarm = false;
};

struct TimerResult {
  std::vector<double> samples_ms;
  std::string notes;  // e.g. the blocking kernel timed out (samples may include launch gaps)
};

class IterationTimer {
 public:
  // Launch-queue entries one batch behind the blocking kernel may take: a sample costs
  // its graph's nodes plus 4 (events and flush). Callers sizing their own batches of
  // visits use this too.
  static constexpr size_t kQueueBudget = 768;

  // Pinned host flag for the blocking kernel. Internal on failure.
  static absl::StatusOr<IterationTimer> Create();

  using Iteration = std::function<absl::Status(cudaStream_t)>;

  // Captures `iteration` into a graph, runs the warm-up, then the timed samples:
  // Capture + WarmUp + TimeVisits with one visit.
  absl::StatusOr<TimerResult> Time(cudaStream_t stream, const Iteration& iteration,
                                   const TimerOptions& options) const;

  // `repeat` iterations back to back in one graph (repeat >= 1).
  static absl::StatusOr<CudaGraphExec> Capture(cudaStream_t stream, const Iteration& iteration,
                                               int repeat = 1);
  // `launches` untimed launches (with the L2 flush before each when cold), then waits.
  static absl::Status WarmUp(cudaStream_t stream, const CudaGraphExec& graph, int launches,
                             const TimerOptions& options);
  // Times the visits in order, behind the blocking kernel, in as few batches as the launch
  // queue allows: result[v] holds visit v's samples (ms per launch / repeat). A blocking
  // kernel timeout is said in `notes` (first one only). options.before_samples is not
  // called here.
  absl::StatusOr<std::vector<std::vector<double>>> TimeVisits(cudaStream_t stream,
                                                              const std::vector<Visit>& visits,
                                                              const TimerOptions& options,
                                                              std::string* notes) const;

 private:
  struct Sample {
    int32_t visit = 0;
    bool rewarm = false;  // untimed launch
  };
  absl::Status TimeBatch(cudaStream_t stream, const std::vector<Visit>& visits,
                         const std::vector<Sample>& batch, const TimerOptions& options,
                         std::vector<std::vector<double>>* out, std::string* notes) const;
  PinnedHostBuffer flag_;  // [0] release flag, [1] timed-out marker
  int32_t* flag_device_ = nullptr;
};

}  // namespace gemmprof::kernels
