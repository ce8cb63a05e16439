// The serving recipes' weight quantization (rules I3, I4 of core/quant/integer_quant.h)
// and the dequantization of every integer form for the fp32 check. The weights are
// prepared once, outside every timing, so these kernels favour plainness over speed:
// one warp per (row, group), reading its group twice (amax, then the cast).
#include <cstdint>

#include "kernels/quant/device_numerics.cuh"
#include "kernels/quant/quantize.h"

namespace gemmprof::kernels {
namespace {

constexpr int kThreads = 256;
constexpr int kWarps = kThreads / 32;

__device__ __forceinline__ float Bf16ToFloat(uint16_t bits) {
  return __uint_as_float(static_cast<uint32_t>(bits) << 16);
}

// I3/I4's scale: bf16(amax / qmax); 1 for amax 0 or non-finite or a quotient rounding to 0.
__device__ __forceinline__ float WeightScale(float amax, float qmax) {
  if (amax == 0.0f || !isfinite(amax)) return 1.0f;
  const float s = __bfloat162float(__float2bfloat16_rn(__fdiv_rn(amax, qmax)));
  return s > 0.0f ? s : 1.0f;
}

// One warp per (row, group): the group's amax (NaN ignored, R7), its scale into
// scales[g * rows + row] (CUTLASS's n-fastest layout), then the values: INT8 bytes or INT4
// nibbles (kInt4: cols even, group even, two per byte, low nibble first).
template <bool kInt4>
__global__ void __launch_bounds__(kThreads)
    WeightQuantizeKernel(const uint16_t* __restrict__ x, int64_t rows, int64_t cols, int64_t group,
                         uint8_t* __restrict__ out, __nv_bfloat16* __restrict__ scales) {
  const int64_t groups = (cols + group - 1) / group;
  const int64_t task = static_cast<int64_t>(blockIdx.x) * kWarps + threadIdx.x / 32;
  if (task >= rows * groups) return;
  const int lane = threadIdx.x % 32;
  const int64_t row = task / groups, g = task % groups;
  const int64_t c0 = g * group, c1 = min(cols, c0 + group);
  const uint16_t* in = x + row * cols;
  float amax = 0.0f;
  for (int64_t c = c0 + lane; c < c1; c += 32) {
    const float v = fabsf(Bf16ToFloat(in[c]));
    if (v == v) amax = fmaxf(amax, v);
  }
  for (int m = 16; m >= 1; m >>= 1) amax = fmaxf(amax, __shfl_xor_sync(0xFFFFFFFFu, amax, m));
  const float s = WeightScale(amax, kInt4 ? 7.0f : 127.0f);
  if (lane == 0) scales[g * rows + row] = __float2bfloat16_rn(s);
  if constexpr (kInt4) {
    uint8_t* o = out + row * (cols / 2);
    for (int64_t c = c0 + 2 * lane; c < c1; c += 64) {
      const uint32_t lo = detail::RoundToInt(__fdiv_rn(Bf16ToFloat(in[c]), s), -8.0f, 7.0f) & 0xF;
      const uint32_t hi =
          detail::RoundToInt(__fdiv_rn(Bf16ToFloat(in[c + 1]), s), -8.0f, 7.0f) & 0xF;
      o[c / 2] = static_cast<uint8_t>(lo | hi << 4);
    }
  } else {
    uint8_t* o = out + row * cols;
    for (int64_t c = c0 + lane; c < c1; c += 32) {
      o[c] = static_cast<uint8_t>(
          detail::RoundToInt(__fdiv_rn(Bf16ToFloat(in[c]), s), -127.0f, 127.0f));
    }
  }
}

// out[r, c] = q[r, c] * factor: int8-rowwise (fp32 scale_inv per row), w8a16 (bf16 scale
// per row), w4a16 (bf16 scale per row and group; q INT4 packed).
enum class Form { kInt8RowFp32, kInt8RowBf16, kInt4Group };

template <Form kForm>
__global__ void DequantizeKernel(const uint8_t* __restrict__ q, const void* __restrict__ factor,
                                 int64_t rows, int64_t cols, int64_t group,
                                 float* __restrict__ out) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= rows * cols) return;
  const int64_t r = i / cols, c = i % cols;
  int32_t value;
  float f;
  if constexpr (kForm == Form::kInt4Group) {
    const uint32_t byte = q[r * (cols / 2) + c / 2];
    const int32_t nibble = (c % 2 == 0) ? (byte & 0xF) : (byte >> 4);
    value = nibble >= 8 ? nibble - 16 : nibble;
    f = __bfloat162float(static_cast<const __nv_bfloat16*>(factor)[(c / group) * rows + r]);
  } else {
    value = static_cast<int8_t>(q[i]);
    f = kForm == Form::kInt8RowFp32
            ? static_cast<const float*>(factor)[r]
            : __bfloat162float(static_cast<const __nv_bfloat16*>(factor)[r]);
  }
  out[i] = __fmul_rn(static_cast<float>(value), f);
}

bool BadShape(int64_t rows, int64_t cols) { return rows < 0 || cols < 0; }

unsigned Blocks(int64_t n, int threads) {
  return static_cast<unsigned>((n + threads - 1) / threads);
}

}  // namespace

cudaError_t W8Quantize(const __nv_bfloat16* x, int64_t rows, int64_t cols, int8_t* out,
                       __nv_bfloat16* scales, cudaStream_t stream) {
  if (BadShape(rows, cols)) return cudaErrorInvalidValue;
  if (rows == 0 || cols == 0) return cudaSuccess;
  WeightQuantizeKernel<false><<<Blocks(rows, kWarps), kThreads, 0, stream>>>(
      reinterpret_cast<const uint16_t*>(x), rows, cols, cols, reinterpret_cast<uint8_t*>(out),
      scales);
  return cudaGetLastError();
}

cudaError_t W4Quantize(const __nv_bfloat16* x, int64_t rows, int64_t cols, int64_t group,
                       uint8_t* out, __nv_bfloat16* scales, cudaStream_t stream) {
  if (BadShape(rows, cols) || cols % 2 != 0 || group < 2 || group % 2 != 0) {
    return cudaErrorInvalidValue;
  }
  if (rows == 0 || cols == 0) return cudaSuccess;
  const int64_t tasks = rows * ((cols + group - 1) / group);
  WeightQuantizeKernel<true><<<Blocks(tasks, kWarps), kThreads, 0, stream>>>(
      reinterpret_cast<const uint16_t*>(x), rows, cols, group, out, scales);
  return cudaGetLastError();
}

cudaError_t DequantizeInt8Rowwise(const int8_t* q, const float* scale_inv, int64_t rows,
                                  int64_t cols, float* out, cudaStream_t stream) {
  if (BadShape(rows, cols)) return cudaErrorInvalidValue;
  if (rows == 0 || cols == 0) return cudaSuccess;
  DequantizeKernel<Form::kInt8RowFp32><<<Blocks(rows * cols, kThreads), kThreads, 0, stream>>>(
      reinterpret_cast<const uint8_t*>(q), scale_inv, rows, cols, cols, out);
  return cudaGetLastError();
}

cudaError_t DequantizeW8(const int8_t* q, const __nv_bfloat16* scales, int64_t rows, int64_t cols,
                         float* out, cudaStream_t stream) {
  if (BadShape(rows, cols)) return cudaErrorInvalidValue;
  if (rows == 0 || cols == 0) return cudaSuccess;
  DequantizeKernel<Form::kInt8RowBf16><<<Blocks(rows * cols, kThreads), kThreads, 0, stream>>>(
      reinterpret_cast<const uint8_t*>(q), scales, rows, cols, cols, out);
  return cudaGetLastError();
}

cudaError_t DequantizeW4(const uint8_t* q, const __nv_bfloat16* scales, int64_t rows, int64_t cols,
                         int64_t group, float* out, cudaStream_t stream) {
  if (BadShape(rows, cols) || cols % 2 != 0 || group < 1) return cudaErrorInvalidValue;
  if (rows == 0 || cols == 0) return cudaSuccess;
  DequantizeKernel<Form::kInt4Group>
      <<<Blocks(rows * cols, kThreads), kThreads, 0, stream>>>(q, scales, rows, cols, group, out);
  return cudaGetLastError();
}

}  // namespace gemmprof::kernels
