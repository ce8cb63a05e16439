// Device quantization kernels, one entry point per recipe step. Each function only
// enqueues work on `stream` and returns the launch status (no synchronization).
// Numerics are exactly core/quant/quant.h's conventions: the gpu tests compare
// every output byte and scale with the host functions there.
//
// Tensors are row-major [rows, cols] BF16 in device memory. A transposed output is the
// row-major [cols, rows] tensor quantized as the host would quantize Transpose(x), so a
// GEMM that needs the other operand orientation (FP8 on Hopper is TN only) gets it from
// the same pass over the input. Scales are in the host's plain row-major layout; the
// GEMM code converts them to the layout cuBLASLt wants.
#pragma once

#include <cuda_bf16.h>
#include <cuda_runtime_api.h>

#include <cstdint>

#include "core/enums.h"
#include "core/quant/quant.h"

namespace gemmprof::kernels {

using core::quant::Fp8Format;

// *amax = max |x| over n elements, NaN ignored. Resets *amax itself.
cudaError_t Amax(const __nv_bfloat16* x, int64_t n, float* amax, cudaStream_t stream);

// scale = fp8_max / *amax (1 when amax is 0 or non-finite), scale_inv = 1 / scale.
cudaError_t ComputeScale(const float* amax, Fp8Format f, float* scale, float* scale_inv,
                         cudaStream_t stream);

// Delayed scaling: scale from history[0..len) (index 0 = most recent).
cudaError_t ScaleFromHistory(const float* history, int32_t len, core::AmaxAlgo algo, Fp8Format f,
                             float* scale, float* scale_inv, cudaStream_t stream);
// Shifts the history by one and stores *new_amax at index 0.
cudaError_t RollAmaxHistory(float* history, int32_t len, const float* new_amax,
                            cudaStream_t stream);

// out = cast(x * *scale); out_t (nullable) = the transposed values [cols, rows];
// amax_out (nullable) = max |x|, fused into the same pass (reset by the function).
cudaError_t CastTranspose(const __nv_bfloat16* x, int64_t rows, int64_t cols, const float* scale,
                          Fp8Format f, uint8_t* out, uint8_t* out_t, float* amax_out,
                          cudaStream_t stream);

// Delayed scaling's whole step: out = cast(x * *scale) with the nullable out_t, the amax
// of x fused into the pass; a one-block launch that follows it (programmatically
// dependent: resident while the cast runs, waiting for its completion) then pushes that
// amax into history[0..len) (index 0 = most recent), writes *scale_inv = 1 / the scale
// the cast used (what the GEMM and the dequantization read) and *scale = the scale of the
// next step (from the new history). Bit for bit the results of ScaleFromHistory,
// CastTranspose with its amax, RollAmaxHistory and ScaleFromHistory again; *scale must
// hold the scale of the current history when called (ScaleFromHistory once after seeding
// it). *amax is 0 before the call (zero it once before the first) and left 0 by it, so a
// step needs no memset; the step's amax is history[0] afterwards.
cudaError_t DelayedCastTranspose(const __nv_bfloat16* x, int64_t rows, int64_t cols, Fp8Format f,
                                 float* history, int32_t len, core::AmaxAlgo algo, float* scale,
                                 float* scale_inv, uint8_t* out, uint8_t* out_t, float* amax,
                                 cudaStream_t stream);

// Current scaling in one launch: *amax = max |x| (NaN ignored), *scale = fp8_max / amax
// (1 when amax is 0 or non-finite), *scale_inv = 1 / scale, out = cast(x * scale) and the
// nullable out_t = its transpose [cols, rows]: the results of Amax, ComputeScale and
// CastTranspose, bit for bit. amax and scale_inv are nullable. `workspace` holds
// kCurrentScalingWorkspaceFloats floats and is not shared with a concurrent launch. The
// launch is cooperative (a grid-wide barrier between the amax and the cast).
inline constexpr int64_t kCurrentScalingWorkspaceFloats = 4096;
cudaError_t CurrentScalingQuantize(const __nv_bfloat16* x, int64_t rows, int64_t cols, Fp8Format f,
                                   uint8_t* out, uint8_t* out_t, float* amax, float* scale,
                                   float* scale_inv, float* workspace, cudaStream_t stream);

// Current scaling by whichever of the two ways is faster for the size: the fused launch
// above, or Amax + ComputeScale + CastTranspose. The fused launch wins where the share
// of the input it keeps on chip for the cast is large (small tensors); on large ones the
// separate launches do, sooner with the transposed output (its per-tile barrier for the
// transposed store costs more than the reuse saves): hence the two element limits below
// (docs/benchmarks.md, "Kernel forms", has the sweep they come from).
// Same arguments and results as CurrentScalingQuantize; amax is required.
inline constexpr int64_t kFusedCurrentScalingMax = int64_t{1} << 27;            // elements
inline constexpr int64_t kFusedCurrentScalingMaxTransposed = int64_t{1} << 25;  // elements
cudaError_t CurrentScaling(const __nv_bfloat16* x, int64_t rows, int64_t cols, Fp8Format f,
                           uint8_t* out, uint8_t* out_t, float* amax, float* scale,
                           float* scale_inv, float* workspace, cudaStream_t stream);

// fp8-block: block_rows 1 (1x128 blocks) or 128 (128x128). out [rows, cols] E4M3 and
// scale_inv [ceil(rows/block_rows), ceil(cols/128)] fp32. Nullable transposed outputs:
// for 1x128, out_t/scale_inv_t quantize x^T with its own 1x128 blocks
// (scale_inv_t [cols, ceil(rows/128)]); for 128x128, out_t is the exact transpose of out
// and scale_inv_t the transposed scale grid.
cudaError_t BlockQuantize(const __nv_bfloat16* x, int64_t rows, int64_t cols, int32_t block_rows,
                          bool pow2_scales, uint8_t* out, float* scale_inv, uint8_t* out_t,
                          float* scale_inv_t, cudaStream_t stream);

// Where BlockQuantize writes the scales, each nullable: the row-major grids above, and
// cuBLASLt's layouts (what its block-scaled matmul reads, without a conversion launch):
// 1x128 VEC128_32F, for each K block the scales of all rows contiguous at gemm_stride
// apart (Vec128RowStride(rows)); 128x128 BLK128x128_32F, the K blocks of a row of tiles
// contiguous at gemm_stride apart (Blk128Stride(cols)); the padding up to a stride is 1.0.
// The transposed copy's are those of x^T ([cols, rows]): gemm_stride_t =
// Vec128RowStride(cols) or Blk128Stride(rows). The layout writes are contiguous per tile,
// the row-major grid of 1x128 scales is not (one scale per row, ceil(cols/128) apart).
struct BlockScaleOutputs {
  float* scale_inv = nullptr;
  float* scale_inv_t = nullptr;
  float* gemm = nullptr;
  int64_t gemm_stride = 0;
  float* gemm_t = nullptr;
  int64_t gemm_stride_t = 0;
};
// As above with any of the outputs: at least one form of the scales; for 1x128, out_t
// exactly when a form of the transposed scales is given.
cudaError_t BlockQuantize(const __nv_bfloat16* x, int64_t rows, int64_t cols, int32_t block_rows,
                          bool pow2_scales, uint8_t* out, uint8_t* out_t,
                          const BlockScaleOutputs& scales, cudaStream_t stream);

// fp8-rowwise (core/quant R11): out [rows, cols] fp8 and scale_inv [rows] fp32, one scale
// per row (per token of an activation, per output channel of a weight). One launch: each
// row's amax, scale and cast in one pass over the row, the row kept on chip where it fits
// (kRowwiseOnChipMaxCols), otherwise read twice. Bit-exact with core::quant::QuantizeRowwise.
inline constexpr int64_t kRowwiseOnChipMaxCols = 16384;
cudaError_t RowwiseQuantize(const __nv_bfloat16* x, int64_t rows, int64_t cols, Fp8Format f,
                            uint8_t* out, float* scale_inv, cudaStream_t stream);

// int8-rowwise's per-token (or per-channel) INT8 (rule I2 of core/quant/integer_quant.h):
// out [rows, cols] int8 and scale_inv [rows] fp32, the launch forms of RowwiseQuantize.
// Bit-exact with core::quant::QuantizeInt8Rowwise.
cudaError_t Int8RowwiseQuantize(const __nv_bfloat16* x, int64_t rows, int64_t cols, int8_t* out,
                                float* scale_inv, cudaStream_t stream);

// The weight-only recipes' weights (integer_quantize.cu; rules I3, I4), bit-exact with
// core::quant::QuantizeW8 / QuantizeW4 except for the scales' layout: scales are BF16,
// [ceil(cols / group), rows] with rows fastest (what CUTLASS's mixed-input GEMM reads;
// w8a16: one group, so simply [rows]). W4: out [rows, cols / 2] packed, low nibble first;
// cols and group even (cudaErrorInvalidValue otherwise).
cudaError_t W8Quantize(const __nv_bfloat16* x, int64_t rows, int64_t cols, int8_t* out,
                       __nv_bfloat16* scales, cudaStream_t stream);
cudaError_t W4Quantize(const __nv_bfloat16* x, int64_t rows, int64_t cols, int64_t group,
                       uint8_t* out, __nv_bfloat16* scales, cudaStream_t stream);
// out [rows, cols] fp32 = q times its factor (the forms above), for the fp32 check.
cudaError_t DequantizeInt8Rowwise(const int8_t* q, const float* scale_inv, int64_t rows,
                                  int64_t cols, float* out, cudaStream_t stream);
cudaError_t DequantizeW8(const int8_t* q, const __nv_bfloat16* scales, int64_t rows, int64_t cols,
                         float* out, cudaStream_t stream);
cudaError_t DequantizeW4(const uint8_t* q, const __nv_bfloat16* scales, int64_t rows, int64_t cols,
                         int64_t group, float* out, cudaStream_t stream);

// MXFP8: out [rows, cols] E4M3, scales [rows, ceil(cols/32)] UE8M0. Nullable out_t /
// scales_t: the quantization of x^T ([cols, rows], scales [cols, ceil(rows/32)]).
cudaError_t Mxfp8Quantize(const __nv_bfloat16* x, int64_t rows, int64_t cols, uint8_t* out,
                          uint8_t* scales, uint8_t* out_t, uint8_t* scales_t, cudaStream_t stream);
// Where Mxfp8Quantize writes the scales, each nullable: the row-major grids above, and the
// 128x4 tiled swizzle cuBLASLt reads (SwizzleBlockScales' layout, SwizzledScaleBytes(rows,
// ceil(cols/32)) bytes; x^T's: SwizzledScaleBytes(cols, ceil(rows/32))), written by the
// quantization itself, one contiguous 512-byte tile per 128x128 block of x.
struct MxScaleOutputs {
  uint8_t* scales = nullptr;
  uint8_t* scales_t = nullptr;
  uint8_t* swizzled = nullptr;
  uint8_t* swizzled_t = nullptr;
};
// As above with any of the outputs: at least one form of the scales, and out_t exactly
// when a form of the transposed scales is given.
cudaError_t Mxfp8Quantize(const __nv_bfloat16* x, int64_t rows, int64_t cols, uint8_t* out,
                          uint8_t* out_t, const MxScaleOutputs& scales, cudaStream_t stream);

// NVFP4: needs the tensor amax first (Amax). out packed [rows, ceil(cols/2)] (element 2j
// in the low nibble), scales [rows, ceil(cols/16)] E4M3, *tensor_scale written.
cudaError_t Nvfp4Quantize(const __nv_bfloat16* x, int64_t rows, int64_t cols,
                          const float* tensor_amax, uint8_t* out, uint8_t* scales,
                          float* tensor_scale, cudaStream_t stream);
// Where Nvfp4Quantize writes its scales: the row-major grid above and/or cuBLASLt's 128x4
// tiled swizzle (SwizzleBlockScales' layout, SwizzledScaleBytes(rows, ceil(cols/16))
// bytes, 4-byte aligned, padding written as 0), each nullable but not both; the tensor
// scale (required).
struct Nvfp4ScaleOutputs {
  uint8_t* scales = nullptr;
  uint8_t* swizzled = nullptr;
  float* tensor_scale = nullptr;
};
cudaError_t Nvfp4Quantize(const __nv_bfloat16* x, int64_t rows, int64_t cols,
                          const float* tensor_amax, uint8_t* out, const Nvfp4ScaleOutputs& scales,
                          cudaStream_t stream);

}  // namespace gemmprof::kernels
