// fp8-rowwise (R11): one fp32 scale per row. One block per row: the block reads its row
// in 16-byte vectors, reduces the row's amax across its warps, computes the scale, and
// casts the values it still holds in registers, so a row of up to kRowwiseOnChipMaxCols
// elements is read once. Longer rows, rows whose length is not a multiple of 8 and
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

// R5 scale of a row from its amax bits; thread 0 stores the row's scale_inv.
__device__ float RowScale(uint32_t amax_bits, Fp8Format f, float* scale_inv_out) {
  const float scale =
      detail::ScaleFromAmax(detail::Bf16AbsBitsToFloat(amax_bits), detail::Fp8MaxOf(f));
  if (threadIdx.x == 0) *scale_inv_out = __fdiv_rn(1.0f, scale);
  return scale;
}

// cols % 8 == 0, cols <= kRowwiseOnChipMaxCols, x 16-byte and out 8-byte aligned.
__global__ void __launch_bounds__(kThreads)
    RowwiseVecKernel(const uint4* __restrict__ x, int64_t cols, Fp8Format f,
                     uint2* __restrict__ out, float* __restrict__ scale_inv) {
  const int64_t row = blockIdx.x;
  const int64_t vecs = cols / kBf16PerVec;
  const uint4* in = x + row * vecs;
  uint4 v[kVecsPerThread];
  uint32_t acc = 0;
#pragma unroll
  for (int j = 0; j < kVecsPerThread; ++j) {
    const int64_t i = threadIdx.x + static_cast<int64_t>(j) * kThreads;
    v[j] = i < vecs ? in[i] : make_uint4(0, 0, 0, 0);
    acc = __vmaxu2(acc, detail::AbsBitsNoNan2(v[j].x));
    acc = __vmaxu2(acc, detail::AbsBitsNoNan2(v[j].y));
    acc = __vmaxu2(acc, detail::AbsBitsNoNan2(v[j].z));
    acc = __vmaxu2(acc, detail::AbsBitsNoNan2(v[j].w));
  }
  const float scale = RowScale(RowMax(detail::MaxHalves(acc)), f, scale_inv + row);
  uint2* o = out + row * vecs;
#pragma unroll
  for (int j = 0; j < kVecsPerThread; ++j) {
    const int64_t i = threadIdx.x + static_cast<int64_t>(j) * kThreads;
    if (i < vecs) {
      o[i] = make_uint2(detail::ScaleCastQuad(v[j].x, v[j].y, scale, f),
                        detail::ScaleCastQuad(v[j].z, v[j].w, scale, f));
    }
  }
}

// Any shape and alignment: the row is read once for its amax and once for the cast.
__global__ void __launch_bounds__(kThreads)
    RowwiseScalarKernel(const uint16_t* __restrict__ x, int64_t cols, Fp8Format f,
                        uint8_t* __restrict__ out, float* __restrict__ scale_inv) {
  const int64_t row = blockIdx.x;
  const uint16_t* in = x + row * cols;
  uint32_t acc = 0;
  for (int64_t c = threadIdx.x; c < cols; c += kThreads) {
    acc = max(acc, detail::AbsBitsNoNan2(in[c]) & 0xFFFFu);
  }
  const float scale = RowScale(RowMax(acc), f, scale_inv + row);
  uint8_t* o = out + row * cols;
  for (int64_t c = threadIdx.x; c < cols; c += kThreads) {
    const float value = __uint_as_float(static_cast<uint32_t>(in[c]) << 16);
    o[c] = static_cast<uint8_t>(detail::CastFp8x2(__fmul_rn(value, scale), 0.0f, f) & 0xFFu);
  }
}

}  // namespace

cudaError_t RowwiseQuantize(const __nv_bfloat16* x, int64_t rows, int64_t cols, Fp8Format f,
                            uint8_t* out, float* scale_inv, cudaStream_t stream) {
  if (rows < 0 || cols < 0 ||
      (rows > 0 && cols > 0 && (x == nullptr || out == nullptr || scale_inv == nullptr))) {
    return cudaErrorInvalidValue;
  }
  if (rows == 0 || cols == 0) return cudaSuccess;
  if (rows > 0x7FFFFFFF) return cudaErrorInvalidValue;  // one block per row
  const bool vec = cols % kBf16PerVec == 0 && cols <= kRowwiseOnChipMaxCols &&
                   detail::IsAligned(x, 16) && detail::IsAligned(out, 8);
  const dim3 grid(static_cast<unsigned>(rows));
  if (vec) {
    RowwiseVecKernel<<<grid, kThreads, 0, stream>>>(reinterpret_cast<const uint4*>(x), cols, f,
                                                    reinterpret_cast<uint2*>(out), scale_inv);
  } else {
    RowwiseScalarKernel<<<grid, kThreads, 0, stream>>>(reinterpret_cast<const uint16_t*>(x), cols,
                                                       f, out, scale_inv);
  }
  return cudaGetLastError();
}

}  // namespace gemmprof::kernels
