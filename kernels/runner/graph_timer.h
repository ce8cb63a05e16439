// The CUDA runner's measure::Timer: the engine's units as the members' CUDA graphs, timed
// by IterationTimer behind its blocking kernel. Internal to kernels/.
#pragma once

#include <cuda_runtime_api.h>

#include <string>
#include <vector>

#include "kernels/runner/kernel_sampler.h"
#include "kernels/runner/member.h"
#include "kernels/timing/iteration_timer.h"
#include "kernels/timing/telemetry_sampler.h"
#include "measure/timer.h"

namespace gemmprof::kernels {

class GraphTimer final : public measure::Timer {
 public:
  struct Setup {
    cudaStream_t stream = nullptr;
    const IterationTimer* timer = nullptr;
    TimerOptions options;                   // warm-up count, the L2 flush of a cold L2
    bool hot_l2 = true;                     // L2 policy hot
    double l2_bytes = 0;                    // the device's L2
    KernelSampler* kernels = nullptr;       // nullable: kernel-only timing of the rounds
    TelemetrySampler* telemetry = nullptr;  // nullable: started with the first round
  };
  // `members` (indexed as the engine's members) must outlive this object.
  GraphTimer(Setup setup, std::vector<Member*> members);

  // Member unit's graph: isolated, back to back (after PrepareBackToBack) or
  // quantization; form c + 1 is contender c.
  absl::Status WarmUp(const measure::Visit& visit, int32_t launches) override;
  // Captures the member's back-to-back graphs (its own GEMM and each contender's),
  // `repeat` iterations each, and launches each once.
  absl::Status PrepareBackToBack(size_t member, int32_t repeat) override;
  // With a hot L2, an interleaved visit of a member whose data could stay resident gets
  // one untimed launch before its samples: the unit before it evicted its operands.
  // Interleaved (round) visits of isolated and quantization units are tagged for
  // kernel-only timing.
  absl::StatusOr<std::vector<std::vector<double>>> TimeVisits(
      const std::vector<measure::Visit>& visits) override;
  // As many rounds as IterationTimer's launch queue takes behind one blocking kernel.
  int32_t MaxRoundsPerCall(const std::vector<measure::Visit>& round) const override;

  // What the timer noted (a blocking-kernel timeout), for every member's notes.
  const std::string& notes() const { return notes_; }

 private:
  absl::StatusOr<const CudaGraphExec*> GraphOf(const measure::UnitId& unit) const;
  bool Rewarm(const measure::Visit& visit) const;

  Setup setup_;
  std::vector<Member*> members_;
  bool telemetry_started_ = false;
  std::string notes_;
};

}  // namespace gemmprof::kernels
