// One GEMM operand under one recipe: its BF16 source, the quantized copy the GEMM reads,
// the scales in cuBLASLt's layout, and the kernels that produce them. The operand is
// stored K-major as [rows, cols] (cols = K). Buffers come from the runner's pool.
//
// Grouped operands (MoE experts, groups > 1) are `groups` [rows, cols] matrices stored
// back to back, as a strided-batched GEMM reads them. The per-tensor recipes quantize
// them with ONE amax/scale for all groups (cuBLASLt's strided batch takes one scale per
// matrix operand); the transposed copies are per group ([cols, rows] each, back to
// back). fp8-block quantizes every group as its own tensor (no 128x128 block spans two
// groups) and keeps one scale tensor per group in cuBLASLt's layout, back to back, group
// g at g * (one matrix's tensor size): the strided-batched matmul gets group 0's and is
// to read group g's at that offset (cuBLASLt has no batch stride for block scales; the
// verification, which dequantizes each group with its own scales, judges the result).
// cuBLASLt 13.1 on Hopper (H200) offers no algorithm for block scales with a batch; the
// runner then makes one call per group, each at its group's data and scale tensor
// (gemm_scale_group_floats() apart). The microscaled recipes do not take groups > 1
// (Unimplemented).
//
// The serving recipes (one group): int8-rowwise quantizes both operands per row to INT8
// with an fp32 scale_inv per row (gemm_scale()); w8a16 and w4a16 quantize the weight (B^T)
// only, to INT8 or packed INT4 with BF16 scales laid out as the CUTLASS mixed-input GEMM
// reads them ([ceil(K / group), rows], rows fastest; gemm_scale()); their activation is
// the BF16 source (the runner configures it as bf16).
#pragma once

#include <cublasLt.h>
#include <cuda_bf16.h>

#include <optional>
#include <string>

#include "core/enums.h"
#include "core/quant/quant.h"
#include "kernels/cuda/device_pool.h"

namespace gemmprof::kernels {

// Whether `groups` copies of a GEMM can be set up as one strided-batched call with
// `recipe` (whether cuBLASLt has an algorithm for it is known only when the plan is
// made): InvalidArgument for groups < 1 (naming `what`); Unimplemented for groups > 1 with
// mxfp8, nvfp4 or a serving recipe ("mxfp8: grouped GEMMs (groups = 8) are not
// implemented in the CUDA runner"): their scale tensors have no per-group layout here yet.
absl::Status CheckGroupedRecipe(core::Recipe recipe, int64_t groups, const std::string& what);

struct OperandConfig {
  std::string slot;            // pool slot prefix, e.g. "a" or "bt"
  int64_t rows = 0, cols = 0;  // of one group
  int64_t groups = 1;          // matrices stored back to back (MoE experts), >= 1
  core::Recipe recipe = core::Recipe::kBf16;
  core::quant::Fp8Format format = core::quant::Fp8Format::kE4M3;  // per-tensor recipes
  bool weight = false;  // fp8-block: 128x128 blocks instead of 1x128
  int32_t amax_history_len = 1024;
  core::AmaxAlgo amax_algo = core::AmaxAlgo::kMax;
  int32_t w4_group = 128;  // w4a16's weight: K elements per scale
};

class OperandQuantizer {
 public:
  // Takes the buffers it needs from `pool`; `source` is the BF16 input, groups x
  // [rows, cols]. `with_transpose` reserves room for the transposed copy a training step
  // also writes. InvalidArgument for groups < 1; Unimplemented for groups > 1 with a
  // microscaled recipe; ResourceExhausted when the device is full.
  static absl::StatusOr<OperandQuantizer> Create(DevicePool& pool, const OperandConfig& config,
                                                 const __nv_bfloat16* source, bool with_transpose);

  // Delayed scaling: resets the amax history and records the source's amax once, as the
  // previous step would have, and sets the scale of the first step (Enqueue's
  // DelayedCastTranspose then leaves each step the next one). No-op for other recipes.
  absl::Status SeedHistory(cudaStream_t stream) const;
  // Enqueues this recipe's quantization of the source (+ transposed copy when asked and
  // the recipe's kernel makes one) and the scale-layout conversion. No-op for bf16.
  // Delayed scaling needs SeedHistory on the stream first (its step expects the scale and
  // amax SeedHistory leaves); a grouped operand keeps one
  // with_transpose between two SeedHistory calls (its per-group path leaves another state).
  absl::Status Enqueue(cudaStream_t stream, bool with_transpose) const;
  // Enqueues the fp32 dequantization of what the GEMM reads into out, groups x
  // [rows, cols], each group with its own scales (from the kernels' row-major scales,
  // not the cuBLASLt copy, so a wrong layout or group offset there shows in the check).
  absl::Status Dequantize(float* out, cudaStream_t stream) const;
  // The same for groups [first, first + count) only, into out as count x [rows, cols]
  // (the fp32 check of a grouped GEMM whose whole reference does not fit the device).
  absl::Status DequantizeGroups(int64_t first, int64_t count, float* out,
                                cudaStream_t stream) const;

  // What the GEMM reads.
  const void* data() const { return data_; }
  cudaDataType_t data_type() const;
  std::optional<cublasLtMatmulMatrixScale_t> scale_mode() const;
  // cuBLASLt's scale pointer: the per-tensor scale_inv, or the first group's block-scale
  // tensor (fp8-block: group g's follows at g * gemm_scale_group_floats() floats).
  const void* gemm_scale() const { return gemm_scale_; }
  // fp8-block: floats of one group's cuBLASLt scale tensor (the group stride); 0 otherwise.
  int64_t gemm_scale_group_floats() const;
  // fp8-block: the scales as the block-quantization kernels write them, row-major, one
  // group's after the other (group g at g * block_scale_group_floats()): what the CUTLASS
  // GEMM reads (cutlass_gemm.h). Null / 0 for other recipes.
  const float* block_scales() const;
  int64_t block_scale_group_floats() const;
  // fp8-block: how Enqueue leaves the scales.
  enum class BlockScaleForm {
    // The row-major grids, then one launch converting them to cuBLASLt's layout (the
    // default: what every consumer reads).
    kConverted,
    // The row-major grids only: an item whose GEMM runs on CUTLASS.
    kRowMajor,
    // cuBLASLt's layout written by the quantization kernel itself, for the operand and its
    // transposed copy (one launch): an item whose GEMM is cuBLASLt's. One group only
    // (grouped operands keep kConverted); Dequantize then quantizes the source once more
    // for the row-major grids it reads, so the check still compares two layouts.
    kCublasLtDirect,
  };
  void set_block_scale_form(BlockScaleForm form) { block_scale_form_ = form; }
  // fp8-block: whether Enqueue(stream, with_transpose) quantizes group by group (one
  // launch each) instead of all groups as one [groups*rows, cols] tensor. Per group when
  // transposed copies are written (the transpose of the stack is not the stack of the
  // transposes) or when 128x128 blocks would span two groups (rows % 128 != 0).
  bool QuantizesPerGroup(bool with_transpose) const;
  // NVFP4 tensor scale s (device pointer), null otherwise.
  const float* tensor_scale() const { return scale_; }
  bool is_quantized() const { return config_.recipe != core::Recipe::kBf16; }
  // The transposed quantized copy (groups x [cols, rows]) when one was reserved and the
  // recipe writes it (not bf16, not nvfp4), else null. For tests and diagnostics.
  const uint8_t* transposed_data() const { return q_t_; }
  const OperandConfig& config() const { return config_; }
  // Device bytes this operand needs beyond its BF16 source (for CanImplement).
  static int64_t ExtraBytes(const OperandConfig& config, bool with_transpose);

 private:
  absl::Status EnqueueTensorScaled(cudaStream_t stream, bool with_transpose) const;
  // Casts every group with scale_ into q_ (and out_t when non-null); amax_out (nullable)
  // gets the fused amax of all groups.
  absl::Status CastGroups(cudaStream_t stream, uint8_t* out_t, float* amax_out) const;
  absl::Status EnqueueBlock(cudaStream_t stream, bool with_transpose) const;
  // Whether EnqueueBlock writes cuBLASLt's layout directly (kCublasLtDirect on one group).
  bool DirectBlockScales() const;
  absl::Status EnqueueMicroscaled(cudaStream_t stream, bool with_transpose) const;

  OperandConfig config_;
  const __nv_bfloat16* source_ = nullptr;
  const void* data_ = nullptr;
  uint8_t* q_ = nullptr;    // quantized [rows, cols] (packed for nvfp4)
  uint8_t* q_t_ = nullptr;  // transposed copy (training step), may be null
  float* amax_ = nullptr;
  float* scale_ = nullptr;  // per-tensor scale / NVFP4 tensor scale
  float* scale_inv_ = nullptr;
  float* history_ = nullptr;
  float* group_amax_ = nullptr;       // one amax per group (fused cast of grouped operands)
  float* workspace_ = nullptr;        // fp8-current: CurrentScaling's block maxima
  void* raw_scales_ = nullptr;        // row-major block scales as the kernels write them
  void* raw_scales_t_ = nullptr;      // of the transposed copy
  const void* gemm_scale_ = nullptr;  // what cuBLASLt's scale pointer gets
  void* gemm_scales_ = nullptr;       // converted layout buffer
  void* gemm_scales_t_ = nullptr;     // the transposed copy's in cuBLASLt's layout (fp8-block
                                      // direct, mxfp8)
  BlockScaleForm block_scale_form_ = BlockScaleForm::kConverted;
  // (Block scales of grouped operands: each of the three buffers holds one group's
  // scales after the other, group g at g times one group's size.)
};

}  // namespace gemmprof::kernels
