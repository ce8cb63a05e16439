// Member: one distinct piece of GPU work of a measured group (measure/members.h), with
// everything the runner builds for it: operands, plans, the CUTLASS form kept, its CUDA
// graphs, and what the rounds, CUPTI and the verification gave. Internal to kernels/.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "core/job.h"
#include "kernels/cutlass/cutlass_gemm.h"
#include "kernels/runner/measure_parts.h"
#include "measure/members.h"
#include "measure/rounds.h"

namespace gemmprof::kernels {

// The NVTX range of a profiled launch: "pass op MxKxN [xG] recipe mode".
std::string ProfileRangeName(const core::WorkItem& item);

struct Member {
  measure::MemberItems items;  // request indexes measured by this member, and its group
  core::WorkItem item;         // the measured item (items.items[0])
  std::string work_key;
  TimedQuantization t;
  Operands o;
  std::vector<MatmulPlan> plans;
  // fp8-block and fp8-rowwise, where CUTLASS measured faster than `plans`: the GEMM
  // Iterate launches.
  std::optional<CutlassGemm> cutlass;
  // CUTLASS forms that came within the runner's contender margin of `cutlass` in the
  // choice's burst: timed as forms of their own in the item's rounds, isolated and back
  // to back, and the fastest of them and `cutlass` kept when the rounds end
  // (measure/rounds.h). A power-capped GPU runs the burst at higher clocks than the
  // rounds, and two close forms can rank differently there.
  struct Contender {
    std::string name;
    CutlassGemm gemm;
    CudaGraphExec iso, b2b;
  };
  std::vector<Contender> contenders;
  std::string cutlass_name;  // the kept form's name in the notes ("CUTLASS batched ...")
  bool fast_accum = false;
  std::vector<std::string> notes;
  CudaGraphExec iso, b2b, quant;
  bool has_quant = false;
  double gemm_bytes = 0, quant_bytes = 0;
  measure::MemberRounds rounds;  // what the rounds gave
  // Kernel-only timing (--timing kernels): per launch, the sum of its kernels' durations.
  std::vector<double> kernel_iso, kernel_quant;
  std::string kernel_names, kernel_note;
  bool profiled = false;  // ran once more under cudaProfilerStart/Stop (Nsight mode)
  core::Energy energy;    // --energy: its back-to-back graph's energy window
  absl::Status refused;   // set at preparation: the member's items get it
};

// Every CUTLASS form of the member's recipe, made for its operands (cutlass_forms.cc), in
// the order they are timed: ("CUTLASS <form>", the form or why it cannot run here:
// FailedPrecondition for a form that cannot take this item on this device). The w4a16
// weight is reordered into the kernels' layout once, on `stream`, and shared by its forms.
std::vector<std::pair<std::string, absl::StatusOr<CutlassGemm>>> CutlassForms(const Member& m,
                                                                              int64_t w4_group,
                                                                              int device, int sm,
                                                                              cudaStream_t stream);

// One iteration of `m` on `q`: its timed quantization, then (with_gemm) the GEMM: `form`
// where given (a contender's), else the member's own (CUTLASS where kept, else its
// cuBLASLt plans).
absl::Status EnqueueIteration(const Member& m, cudaStream_t q, bool with_gemm,
                              const CutlassGemm* form = nullptr);

}  // namespace gemmprof::kernels
