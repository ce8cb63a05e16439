// CudaRunner::Member: one distinct piece of GPU work of a measured group, shared by the
// files that measure it (group_measurer.cc, kernel_sampler.cc). Internal to kernels/.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "core/job.h"
#include "kernels/runner/cuda_runner.h"
#include "kernels/cutlass/cutlass_gemm.h"
#include "kernels/runner/measure_parts.h"

namespace gemmprof::kernels {

// The NVTX range of a profiled launch: "pass op MxKxN [xG] recipe mode".
std::string ProfileRangeName(const core::WorkItem& item);

struct CudaRunner::Member {
  std::vector<size_t> items;  // request indexes measured by this member; [0] is its own
  core::WorkItem item;
  std::string work_key;
  TimedQuantization t;
  Operands o;
  std::vector<MatmulPlan> plans;
  // fp8-block, where CUTLASS measured faster than `plans`: the GEMM Iterate launches.
  std::optional<CutlassGemm> cutlass;
  // CUTLASS forms that came within the runner's contender margin of `cutlass` in the
  // choice's burst: timed as units of their own in the item's rounds, isolated and back
  // to back, and the fastest of them and `cutlass` kept when the rounds end (TimeRounds).
  // A power-capped GPU runs the burst at higher clocks than the rounds, and two close
  // forms can rank differently there.
  struct Contender {
    std::string name;
    CutlassGemm gemm;
    CudaGraphExec iso, b2b;
    std::vector<double> iso_samples, iso_rounds, b2b_rounds;
  };
  std::vector<Contender> contenders;
  std::string cutlass_name;  // the kept form's name in the notes ("CUTLASS batched ...")
  bool fast_accum = false;
  std::vector<std::string> notes;
  CudaGraphExec iso, b2b, quant;
  int32_t b2b_count = 0;    // GEMMs per back-to-back launch
  int32_t b2b_every = 1;    // back to back visited every this many rounds
  size_t group = 0;         // its measurement group (GroupKey) in the request, 0-based
  std::string stop_reason;  // why the rounds stopped, with its group's precision
  bool has_quant = false;
  double gemm_bytes = 0, quant_bytes = 0;
  std::vector<double> iso_samples, iso_rounds, b2b_rounds, quant_rounds;
  // Kernel-only timing (--timing kernels): per launch, the sum of its kernels' durations.
  std::vector<double> kernel_iso, kernel_quant;
  std::string kernel_names, kernel_note;
  bool profiled = false;  // ran once more under cudaProfilerStart/Stop (Nsight mode)
  absl::Status refused;   // set at preparation: the member's items get it
};

}  // namespace gemmprof::kernels
