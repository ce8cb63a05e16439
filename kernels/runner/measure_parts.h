// The pieces of a measurement that CudaRunner::MeasureGroup puts together per member
// (one distinct piece of GPU work): operands, plans, autotuning, byte counts, notes.
// Internal to kernels/.
#pragma once

#include <deque>
#include <optional>
#include <string>
#include <vector>

#include "core/job.h"
#include "core/result.h"
#include "kernels/cublaslt/cublaslt_handles.h"
#include "kernels/cublaslt/matmul_plan.h"
#include "kernels/cuda/device_pool.h"
#include "kernels/cutlass/cutlass_gemm.h"
#include "kernels/quant/operand_quantizer.h"
#include "kernels/runner/recipe_rules.h"
#include "kernels/timing/iteration_timer.h"

namespace gemmprof::kernels {

// The BF16 inputs every member of a group reads (same shape, same seed).
struct Sources {
  __nv_bfloat16* a = nullptr;
  __nv_bfloat16* bt = nullptr;
};

struct Operands {
  __nv_bfloat16* c = nullptr;
  float* alpha_beta = nullptr;  // NVFP4: [alpha, beta] on the device
  OperandQuantizer a, bt;
};

// The BF16 sources and output of each measurement group (GroupKey) of one measurement,
// made on first use and shared by that group's members: the first group's in the pool
// slots "a.src", "bt.src" and "c", the k-th's under "g<k>.". Pointers stay valid.
class GroupBuffers {
 public:
  struct Set {
    std::string key;
    Sources src;
    __nv_bfloat16* c = nullptr;
  };
  absl::StatusOr<const Set*> For(DevicePool& pool, const core::WorkItem& item,
                                 const core::TimingOptions& timing, cudaStream_t st);

 private:
  std::deque<Set> sets_;
};

// Routed experts with uneven tokens (GemmOp::group_tokens): every expert's operands sit
// at the capacity (the op's token dimension), group after group, its tokens first and
// zeros after them (A's rows in fprop and dgrad; A's and B^T's K columns in wgrad), and
// the output starts zeroed. A GEMM that follows the counts (cuBLASLt one call per
// expert at its rows, CUTLASS's grouped forms with each expert's rows as its problem
// size) and one that runs the whole capacity (the masked layout's strided batch) then
// write the same C, and the verifier checks both against one reference. wgrad runs every
// expert at the capacity K (its padding contributes zeros): per-expert K is not run.
//
// Random-normal BF16 A and B^T from the job's seed, generated on the device, in the pool
// slots "<prefix>a.src" and "<prefix>bt.src"; an uneven expert's padding zeroed.
absl::StatusOr<Sources> PrepareSources(DevicePool& pool, const core::WorkItem& item,
                                       const core::TimingOptions& timing, cudaStream_t st,
                                       const std::string& prefix = "");

// Both operands of `item` quantized once from `src` into the pool slots under `prefix`
// (so members of one group keep their own copies): what the timed region does not
// quantize is then ready, as after an earlier step (delayed scaling: one amax in the
// history). `c` is the output every member writes.
absl::StatusOr<Operands> PrepareOperands(DevicePool& pool, const core::WorkItem& item,
                                         const core::TimingOptions& timing,
                                         const TimedQuantization& t, const Sources& src,
                                         __nv_bfloat16* c, const std::string& prefix,
                                         cudaStream_t st, std::vector<std::string>* notes);

MatmulSpec GemmSpec(const core::GemmOp& op, const Operands& o, std::optional<bool> fast_accum,
                    const DeviceBuffer& workspace);

// One plan, or one per group where cuBLASLt has no batched algorithm for block scales
// (`per_group_reason` then says why). `expert_rows` (contiguous experts at uneven
// tokens: fprop, dgrad) gives each group's rows: one plan per expert at its rows rounded
// up to 16 (zeros past its tokens), none for an expert without tokens; empty: every
// group at spec.m.
absl::StatusOr<std::vector<MatmulPlan>> CreatePlans(cublasLtHandle_t lt, const MatmulSpec& spec,
                                                    const Operands& o, int candidates,
                                                    const std::vector<int64_t>& expert_rows,
                                                    std::string* per_group_reason);

// Times each of `candidates` (ways to run one item's GEMM) in a burst of `rounds`
// interleaved rounds (measure::TimeCandidates), each captured and timed the way items are
// (graph launches, per-sample events, under the item's L2 policy): per candidate its
// figure, or the error of its first failed launch (the stream is then synchronized and
// the error cleared where CUDA allows).
std::vector<absl::StatusOr<double>> TimeCandidates(
    const IterationTimer& timer, cudaStream_t stream,
    const std::vector<IterationTimer::Iteration>& candidates, const TimerOptions& item_options,
    int rounds);

// Times every heuristic candidate in interleaved rounds and keeps the fastest (cuBLASLt's
// first choice unless another is more than 1% faster).
absl::Status Autotune(MatmulPlan& plan, const IterationTimer& timer, cudaStream_t stream,
                      const TimerOptions& item_options);

// Bytes the GEMM moves per iteration (operands of every group and the output), and the
// minimum bytes the timed quantization moves (reads of the BF16 sources, quantized writes
// and their scales: core/quant/scale_bytes.h's QuantizationFloorBytes of each operand it
// quantizes).
double GemmBytes(const core::WorkItem& item, const Operands& o);
double QuantBytes(const Operands& o, const TimedQuantization& t);

// A's (and C's) rows the GEMM works on: the experts' tokens in fprop and dgrad when
// routing left them uneven, otherwise groups x M.
int64_t RoutedRows(const core::GemmOp& op);
// Whether the op's experts run at their own rows (uneven tokens, fprop or dgrad).
bool RunsPerExpertRows(const core::GemmOp& op);

// `cutlass`: the groups run in one CUTLASS launch (grouped or batched form) instead of
// cuBLASLt.
std::string GroupedNote(const core::WorkItem& item, const TimedQuantization& t, const Operands& o,
                        const std::string& per_group_reason, bool cutlass);

// fp8-block: the CUTLASS grouped block-scaled GEMM over the item's operands, scales and
// output (every group in one launch; a dense item is one group). FailedPrecondition
// where it cannot run here (see CutlassGemm::Create).
absl::StatusOr<CutlassGemm> CreateBlockGemm(const core::WorkItem& item, const Operands& o,
                                            BlockGemmSchedule schedule, int device, int sm);
// fp8-rowwise: the CUTLASS GEMM with the row scales of A and B^T (the quantizer's
// scale_inv vectors, group g's m and n floats on) applied in its epilogue, every group in
// one launch. FailedPrecondition where it cannot run here (see CutlassGemm::CreateRowwise).
absl::StatusOr<CutlassGemm> CreateRowwiseGemm(const core::WorkItem& item, const Operands& o,
                                              bool fast_accum, RowwiseGemmSchedule schedule,
                                              int device, int sm);
std::string ThrottleNote(const core::Telemetry& t);

}  // namespace gemmprof::kernels
