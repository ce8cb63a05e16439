// fp8-rowwise (R11) and int8-rowwise's per-token INT8 (rule I2 of core/quant/
// integer_quant.h): one fp32 scale per row. A group of 32..256 threads per row (the
// fewest that hold it; short rows share a block): the group reads its row in 16-byte
// vectors, reduces the row's amax across its warps, computes the scale, and casts the
// values it still holds in registers, so a row of up to kRowwiseOnChipMaxCols elements
// is read once. Longer rows, rows whose length is not a multiple of 8 and
// misaligned pointers take the scalar kernel, which reads the row twice.
#include <cstdint>

#include "kernels/quant/device_numerics.cuh"
#include "kernels/quant/launch_utils.cuh"
#include "kernels/quant/quantize.h"

namespace gemmprof::kernels {
namespace {

constexpr int kThreads = 256;
constexpr int kBf16PerVec = 8;
// 16-byte vectors each thread holds: kThreads * kVecsPerThread * 8 elements per row.
constexpr int kVecsPerThread = 8;
static_assert(kThreads * kVecsPerThread * kBf16PerVec == kRowwiseOnChipMaxCols,
              "the on-chip limit of quantize.h is what one block holds in registers");

// The row's scale from its amax bits (R5 for FP8; I2's 127 / amax, the same guards, for
// INT8); the row's first thread stores its scale_inv.
template <bool kInt8>
__device__ float RowScale(uint32_t amax_bits, Fp8Format f, bool first, float* scale_inv_out) {
  const float scale = detail::ScaleFromAmax(detail::Bf16AbsBitsToFloat(amax_bits),
                                            kInt8 ? 127.0f : detail::Fp8MaxOf(f));
  if (first) *scale_inv_out = __fdiv_rn(1.0f, scale);
  return scale;
}

// I2's INT8 value (I1 within [-127, 127]) as its byte.
__device__ __forceinline__ uint32_t Int8Byte(float v) {
  return static_cast<uint32_t>(detail::RoundToInt(v, -127.0f, 127.0f)) & 0xFFu;
}

// Four BF16 values (two packed words) scaled and cast, as four bytes (element 0 lowest).
template <bool kInt8>
__device__ __forceinline__ uint32_t CastQuad(uint32_t lo, uint32_t hi, float scale, Fp8Format f) {
  if constexpr (kInt8) {
    return Int8Byte(__fmul_rn(detail::LowBf16(lo), scale)) |
           Int8Byte(__fmul_rn(detail::HighBf16(lo), scale)) << 8 |
           Int8Byte(__fmul_rn(detail::LowBf16(hi), scale)) << 16 |
           Int8Byte(__fmul_rn(detail::HighBf16(hi), scale)) << 24;
  } else {
    return detail::ScaleCastQuad(lo, hi, scale, f);
  }
}

// kTpr threads (a multiple of 32) per row, kThreads / kTpr rows per block, each thread
// holding up to kVecsPerThread 16-byte vectors: short rows share a block, so every
// thread keeps several loads in flight (cols <= kTpr * 64). Requires cols % 8 == 0, x
// 16-byte and out 8-byte aligned.
template <int kTpr, bool kInt8>
__global__ void __launch_bounds__(kThreads)
    RowwiseVecKernel(const uint4* __restrict__ x, int64_t rows, int64_t cols, Fp8Format f,
                     uint2* __restrict__ out, float* __restrict__ scale_inv) {
  constexpr int kWarpsPerRow = kTpr / 32;
  __shared__ uint32_t warp_max[kThreads / 32];
  const int group = threadIdx.x / kTpr, lane = threadIdx.x % kTpr;
  const int64_t row = static_cast<int64_t>(blockIdx.x) * (kThreads / kTpr) + group;
  const int64_t vecs = row < rows ? cols / kBf16PerVec : 0;
  const uint4* in = x + row * (cols / kBf16PerVec);
  uint4 v[kVecsPerThread];
  uint32_t acc = 0;
#pragma unroll
  for (int j = 0; j < kVecsPerThread; ++j) {
    const int64_t i = lane + static_cast<int64_t>(j) * kTpr;
    v[j] = i < vecs ? in[i] : make_uint4(0, 0, 0, 0);
    acc = __vmaxu2(acc, detail::AbsBitsNoNan2(v[j].x));
    acc = __vmaxu2(acc, detail::AbsBitsNoNan2(v[j].y));
    acc = __vmaxu2(acc, detail::AbsBitsNoNan2(v[j].z));
    acc = __vmaxu2(acc, detail::AbsBitsNoNan2(v[j].w));
  }
  uint32_t m = detail::ShuffleMax<1, 16>(detail::MaxHalves(acc));
  if (threadIdx.x % 32 == 0) warp_max[threadIdx.x / 32] = m;
  __syncthreads();
#pragma unroll
  for (int w = 0; w < kWarpsPerRow; ++w) m = max(m, warp_max[group * kWarpsPerRow + w]);
  if (row >= rows) return;
  const float scale = RowScale<kInt8>(m, f, lane == 0, scale_inv + row);
  uint2* o = out + row * (cols / kBf16PerVec);
#pragma unroll
  for (int j = 0; j < kVecsPerThread; ++j) {
    const int64_t i = lane + static_cast<int64_t>(j) * kTpr;
    if (i < vecs) {
      o[i] = make_uint2(CastQuad<kInt8>(v[j].x, v[j].y, scale, f),
                        CastQuad<kInt8>(v[j].z, v[j].w, scale, f));
    }
  }
}

template <int kTpr, bool kInt8>
void LaunchVec(const __nv_bfloat16* x, int64_t rows, int64_t cols, Fp8Format f, uint8_t* out,
               float* scale_inv, cudaStream_t stream) {
  constexpr int kRowsPerBlock = kThreads / kTpr;
  const dim3 grid(static_cast<unsigned>((rows + kRowsPerBlock - 1) / kRowsPerBlock));
  RowwiseVecKernel<kTpr, kInt8><<<grid, kThreads, 0, stream>>>(
      reinterpret_cast<const uint4*>(x), rows, cols, f, reinterpret_cast<uint2*>(out), scale_inv);
}

// The block's max of per-thread |x| bits (16 significant bits); valid in every thread.
__device__ uint32_t RowMax(uint32_t bits16) {
  __shared__ uint32_t warp_max[kThreads / 32];
  __shared__ uint32_t row_max;
  uint32_t v = detail::ShuffleMax<1, 16>(bits16);
  const int warp = threadIdx.x / 32;
  if (threadIdx.x % 32 == 0) warp_max[warp] = v;
  __syncthreads();
  if (warp == 0) {
    v = threadIdx.x < kThreads / 32 ? warp_max[threadIdx.x] : 0u;
    v = detail::ShuffleMax<1, 16>(v);
    if (threadIdx.x == 0) row_max = v;
  }
  __syncthreads();
  return row_max;
}

// Any shape and alignment: the row is read once for its amax and once for the cast.
template <bool kInt8>
__global__ void __launch_bounds__(kThreads)
    RowwiseScalarKernel(const uint16_t* __restrict__ x, int64_t cols, Fp8Format f,
                        uint8_t* __restrict__ out, float* __restrict__ scale_inv) {
  const int64_t row = blockIdx.x;
  const uint16_t* in = x + row * cols;
  uint32_t acc = 0;
  for (int64_t c = threadIdx.x; c < cols; c += kThreads) {
    acc = max(acc, detail::AbsBitsNoNan2(in[c]) & 0xFFFFu);
  }
  const float scale = RowScale<kInt8>(RowMax(acc), f, threadIdx.x == 0, scale_inv + row);
  uint8_t* o = out + row * cols;
  for (int64_t c = threadIdx.x; c < cols; c += kThreads) {
    const float value = __uint_as_float(static_cast<uint32_t>(in[c]) << 16);
    o[c] =
        static_cast<uint8_t>(kInt8 ? Int8Byte(__fmul_rn(value, scale))
                                   : detail::CastFp8x2(__fmul_rn(value, scale), 0.0f, f) & 0xFFu);
  }
}

template <bool kInt8>
cudaError_t QuantizeRows(const __nv_bfloat16* x, int64_t rows, int64_t cols, Fp8Format f,
                         uint8_t* out, float* scale_inv, cudaStream_t stream) {
  if (rows < 0 || cols < 0 ||
      (rows > 0 && cols > 0 && (x == nullptr || out == nullptr || scale_inv == nullptr))) {
    return cudaErrorInvalidValue;
  }
  if (rows == 0 || cols == 0) return cudaSuccess;
  if (rows > 0x7FFFFFFF) return cudaErrorInvalidValue;  // one block per row
  const bool vec = cols % kBf16PerVec == 0 && cols <= kRowwiseOnChipMaxCols &&
                   detail::IsAligned(x, 16) && detail::IsAligned(out, 8);
  if (vec) {
    // The fewest threads per row that hold the row: short rows share a block.
    const int64_t per_thread = kVecsPerThread * kBf16PerVec;
    if (cols <= 32 * per_thread) {
      LaunchVec<32, kInt8>(x, rows, cols, f, out, scale_inv, stream);
    } else if (cols <= 64 * per_thread) {
      LaunchVec<64, kInt8>(x, rows, cols, f, out, scale_inv, stream);
    } else if (cols <= 128 * per_thread) {
      LaunchVec<128, kInt8>(x, rows, cols, f, out, scale_inv, stream);
    } else {
      LaunchVec<256, kInt8>(x, rows, cols, f, out, scale_inv, stream);
    }
  } else {
    RowwiseScalarKernel<kInt8><<<dim3(static_cast<unsigned>(rows)), kThreads, 0, stream>>>(
        reinterpret_cast<const uint16_t*>(x), cols, f, out, scale_inv);
  }
  return cudaGetLastError();
}

}  // namespace

cudaError_t RowwiseQuantize(const __nv_bfloat16* x, int64_t rows, int64_t cols, Fp8Format f,
                            uint8_t* out, float* scale_inv, cudaStream_t stream) {
  return QuantizeRows<false>(x, rows, cols, f, out, scale_inv, stream);
}

cudaError_t Int8RowwiseQuantize(const __nv_bfloat16* x, int64_t rows, int64_t cols, int8_t* out,
                                float* scale_inv, cudaStream_t stream) {
  return QuantizeRows<true>(x, rows, cols, Fp8Format::kE4M3, reinterpret_cast<uint8_t*>(out),
                            scale_inv, stream);
}

}  // namespace gemmprof::kernels
