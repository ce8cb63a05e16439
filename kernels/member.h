// CudaRunner::Member: one distinct piece of GPU work of a measured group, shared by the
// files that measure it (group_measurer.cc, kernel_sampler.cc). Internal to kernels/.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "core/job.h"
#include "kernels/cuda_runner.h"
#include "kernels/cutlass_gemm.h"
#include "kernels/measure_parts.h"

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
