// The runner's own small device kernels (not the quantization kernels, which live in
// kernels/quant/): random inputs, dequantization for the reference, scale-layout
// conversion for cuBLASLt, the relative-error reduction and timing helpers.
// Every function only enqueues on `stream` and returns the launch status.
#pragma once

#include <cuda_bf16.h>
#include <cuda_runtime_api.h>

#include <cstdint>

#include "core/quant/quant.h"

namespace gemmprof::kernels {

// x[i] = bf16(N(0,1)) from a counter-based Philox4x32-10 generator keyed by `seed`;
// `tensor_id` separates tensors drawn from one seed. Deterministic for (seed, id, i).
cudaError_t FillRandomNormalBf16(__nv_bfloat16* x, int64_t n, uint64_t seed, uint32_t tensor_id,
                                 cudaStream_t stream);

// out[i] = float(x[i]).
cudaError_t Bf16ToFloat(const __nv_bfloat16* x, int64_t n, float* out, cudaStream_t stream);
// out[i] = decode(q[i]) * *scale_inv (per-tensor FP8).
cudaError_t DequantizeTensorFp8(const uint8_t* q, int64_t n, core::quant::Fp8Format f,
                                const float* scale_inv, float* out, cudaStream_t stream);
// out[r, c] = decode_e4m3(q[r, c]) * scale_inv[r]: row-wise scales (fp8-rowwise).
cudaError_t DequantizeRowFp8(const uint8_t* q, int64_t rows, int64_t cols, const float* scale_inv,
                             float* out, cudaStream_t stream);
// out[g, r, c] = decode_e4m3(q[g, r, c]) * scale_inv[g][r / block_rows, c / 128]: `groups`
// [rows, cols] tensors back to back, each with its own row-major scale grid of
// ceil(rows / block_rows) * ceil(cols / 128) floats, the grids back to back.
cudaError_t DequantizeBlockFp8(const uint8_t* q, int64_t groups, int64_t rows, int64_t cols,
                               int32_t block_rows, const float* scale_inv, float* out,
                               cudaStream_t stream);
// out[r, c] = decode_e4m3(q[r, c]) * 2^(scales[r, c / 32] - 127).
cudaError_t DequantizeMxfp8(const uint8_t* q, int64_t rows, int64_t cols, const uint8_t* scales,
                            float* out, cudaStream_t stream);
// out[r, c] = e2m1(q) * e4m3(scales[r, c / 16]) / *tensor_scale.
cudaError_t DequantizeNvfp4(const uint8_t* q, int64_t rows, int64_t cols, const uint8_t* scales,
                            const float* tensor_scale, float* out, cudaStream_t stream);

// The fp8-block scale conversions take `groups` [rows, cols] tensors (MoE experts; 1 for
// an ordinary GEMM): `in` holds each group's row-major grid, back to back, and `out` gets
// each group's cuBLASLt tensor, back to back, group g at g * Vec128ScaleFloats(rows, cols)
// (or Blk128ScaleFloats): one matrix's tensor per group of a strided-batched matmul.
//
// 1x128 scales, row-major [rows, ceil(cols/128)] -> cuBLASLt VEC128_32F layout: for each
// K block, the scales of all rows contiguous, row stride padded to a multiple of 4.
cudaError_t ToVec128Layout(const float* in, int64_t groups, int64_t rows, int64_t cols, float* out,
                           cudaStream_t stream);
int64_t Vec128RowStride(int64_t rows);
// Floats of one [rows, cols] matrix's VEC128_32F tensor: ceil(cols/128) * Vec128RowStride.
int64_t Vec128ScaleFloats(int64_t rows, int64_t cols);
// 128x128 scales, row-major [ceil(rows/128), ceil(cols/128)] -> cuBLASLt BLK128x128_32F
// layout: K-block index fastest, stride padded to a multiple of 4.
cudaError_t ToBlk128Layout(const float* in, int64_t groups, int64_t rows, int64_t cols, float* out,
                           cudaStream_t stream);
int64_t Blk128Stride(int64_t cols);
// Floats of one [rows, cols] matrix's BLK128x128_32F tensor: ceil(rows/128) * Blk128Stride.
int64_t Blk128ScaleFloats(int64_t rows, int64_t cols);
// Row-major [rows, scale_cols] byte scales (MXFP8 / NVFP4) -> the 128x4 tiled swizzle
// cuBLASLt wants for VEC32_UE8M0 / VEC16_UE4M3. `out` holds SwizzledScaleBytes bytes.
cudaError_t SwizzleBlockScales(const uint8_t* in, int64_t rows, int64_t scale_cols, uint8_t* out,
                               cudaStream_t stream);
int64_t SwizzledScaleBytes(int64_t rows, int64_t scale_cols);
// *alpha = 1 / (*sa * *sb) (NVFP4's per-tensor scales folded into the GEMM's alpha).
cudaError_t Nvfp4Alpha(const float* sa, const float* sb, float* alpha, cudaStream_t stream);

// sums[0] += sum (out - ref)^2, sums[1] += sum ref^2, sums[2] += count of non-finite
// out values, in double. `out` is BF16 [n]; sums must be zeroed first.
cudaError_t ErrorSums(const __nv_bfloat16* out, const float* ref, int64_t n, double* sums,
                      cudaStream_t stream);

// *out = max(0, x[0], ..., x[n-1]), NaN entries ignored: the amax of a grouped operand
// from its groups' amaxes. n >= 1 (cudaErrorInvalidValue otherwise).
cudaError_t MaxOf(const float* x, int64_t n, float* out, cudaStream_t stream);

// One thread spins until *flag != 0 (host-mapped memory) or `timeout_ns` passes; on
// timeout it sets *timed_out = 1. Holds the stream while the host enqueues work behind it.
cudaError_t BlockOnHostFlag(const volatile int32_t* flag, int32_t* timed_out, uint64_t timeout_ns,
                            cudaStream_t stream);

// One thread that does nothing: a launch for its effect on the context (CudaRunner's
// second stream).
cudaError_t LaunchEmptyKernel(cudaStream_t stream);

// Reads `bytes` (a multiple of 16, 16-byte aligned) at `buffer` through the L2: the lines the
// L2 held are evicted (the dirty ones written back now) and it is left holding clean lines
// of `buffer`. The L2 flush of L2Policy::kClean, with a buffer of twice the L2's size.
cudaError_t ReadThroughL2(const void* buffer, size_t bytes, cudaStream_t stream);

// Test hook (the worker's illegal-address fault): one thread stores through an address
// no allocation holds, so the context fails with cudaErrorIllegalAddress, a sticky error.
cudaError_t WriteThroughBadPointer(cudaStream_t stream);

// Test hook (the worker's hang fault on a GPU): one thread that spins while the device
// int at `forever` is non-zero; given a 1 that nothing changes, a kernel that never ends.
cudaError_t LaunchNeverEndingKernel(const int* forever, cudaStream_t stream);

}  // namespace gemmprof::kernels
