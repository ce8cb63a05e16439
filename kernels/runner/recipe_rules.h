// The rules that turn one work item into GEMM operands: formats per pass (HYBRID:
// gradients in E5M2), which operand is a weight, Transformer Engine's fast-accumulation
// defaults, what a mode/accounting puts inside the timed region, the verification
// thresholds, and the device memory an item needs. Pure functions, no CUDA calls.
#pragma once

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "core/job.h"
#include "kernels/quant/operand_quantizer.h"

namespace gemmprof::kernels {

// Which quantizations run inside the timed region.
struct TimedQuantization {
  bool a = false, bt = false;  // quantize this operand every iteration
  bool transposes = false;     // also write the transposed copies (training step)
};

// Operand configs for item (A = [m, k], B^T = [n, k]), per DESIGN.md's pass table:
// fprop A = X, B^T = W; dgrad A = dY, B^T = W^T; wgrad A = X^T, B^T = dY^T.
// Both carry item.op.groups: a grouped op has one such pair per group (per expert: its
// own tokens and its own weight), stored group after group.
OperandConfig OperandA(const core::WorkItem& item, const core::TimingOptions& timing);
OperandConfig OperandBt(const core::WorkItem& item, const core::TimingOptions& timing);

// Fast (non-split) accumulation for the item, or std::nullopt for BF16 / MX recipes
// where the attribute does not apply (core::ResolveFastAccum under the item's own setting
// when it has one, else the job's `option`). `note` is set when a request was overridden.
std::optional<bool> ResolveFastAccum(const core::WorkItem& item, core::FastAccum option,
                                     std::string* note);

// CheckGroupedRecipe for an item (the shape names it in the InvalidArgument message).
absl::Status CheckGroups(const core::WorkItem& item);

TimedQuantization TimedPart(const core::WorkItem& item, core::Accounting accounting);

// ||out - ref||_F / ||ref||_F above which the item is `incorrect`. The reference is the
// fp32 product of the dequantized operands, so quantization error is excluded; what is
// left is accumulation order/precision and the BF16 rounding of the output.
double ErrorThreshold(core::Recipe recipe, bool fast_accum);

// Bytes the measurement needs on the device (inputs, quantized copies, output of every
// group, workspace, L2 flush buffer); the verification buffers are counted separately.
int64_t MeasurementBytes(const core::WorkItem& item, const core::TimingOptions& timing,
                         int64_t workspace_bytes, int64_t l2_bytes);
// The fp32 reference's buffers for `groups` GEMMs of `shape`.
int64_t VerificationBytes(const core::GemmShape& shape, int64_t groups = 1);

// What decides the GPU work an item times, as text: two items with equal keys run the
// same kernels on operands of the same types and sizes (bf16 autocast and prequant;
// fp8-current and fp8-delayed prequant, whose GEMMs take the same E4M3/E5M2 operands and
// fp32 tensor scales; in a training step's wgrad every per-tensor FP8 item, which
// quantizes nothing new). Built from exactly what builds the timed graph: the GEMM
// (shape, groups, operand types and scale modes, fast accumulation, device-side alpha),
// every timed quantization's full operand config, and the job-wide options that change
// the timing (L2 policy, autotune, seed). A new input to the graph must be added here.
std::string WorkKey(const core::WorkItem& item, const core::TimingOptions& timing);

// "gemmprof item 17 fprop qkv 15872x4096x12288 fp8-current autocast" (" x8 groups"
// after the shape when grouped).
std::string NvtxName(const core::WorkItem& item);

}  // namespace gemmprof::kernels
