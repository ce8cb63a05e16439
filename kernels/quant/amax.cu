// Amax: a grid-stride max |x| reduction over a BF16 tensor (R7), one atomic per block.
#include <cstdint>

#include "kernels/quant/device_numerics.cuh"
#include "kernels/quant/launch_utils.cuh"
#include "kernels/quant/quantize.h"

namespace gemmprof::kernels {
namespace {

constexpr int kThreads = 512;
// 16-byte vectors each thread keeps in flight per iteration: 64 bytes per thread is what
// it takes to cover HBM latency at the occupancy this kernel runs at.
constexpr int kUnroll = 4;
constexpr int kBf16PerVec = 8;

// Block-wide max of packed-abs words; the result is valid in thread 0.
__device__ uint32_t BlockMax(uint32_t packed) {
  __shared__ uint32_t warp_max[kThreads / 32];
  uint32_t v = detail::MaxHalves(detail::ShuffleMax2<1, 16>(packed));
  const int warp = threadIdx.x / 32;
  if (threadIdx.x % 32 == 0) warp_max[warp] = v;
  __syncthreads();
  if (warp == 0) {
    v = threadIdx.x < kThreads / 32 ? warp_max[threadIdx.x] : 0u;
    v = detail::ShuffleMax<1, 16>(v);
  }
  return v;
}

// The packed per-half max of |x| bits over this thread's share of the tensor: `vec_count`
// 16-byte vectors at `x`, then `tail_count` scalar elements. kNanSafe: NaN halves count
// as 0 (R7); otherwise they count above Inf, and the caller redoes the scan if its result
// shows one (detail::HasNan).
template <bool kNanSafe>
__device__ __forceinline__ uint32_t ThreadMax(const uint4* __restrict__ x, int64_t vec_count,
                                              const uint16_t* __restrict__ tail,
                                              int64_t tail_count) {
  const auto abs = [](uint32_t v) {
    return kNanSafe ? detail::AbsBitsNoNan2(v) : detail::AbsBits2(v);
  };
  uint32_t acc = 0;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * kThreads;
  int64_t i = static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x;
  for (; i + (kUnroll - 1) * stride < vec_count; i += kUnroll * stride) {
    uint4 v[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) v[u] = __ldg(x + i + u * stride);
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      acc = __vmaxu2(acc, abs(v[u].x));
      acc = __vmaxu2(acc, abs(v[u].y));
      acc = __vmaxu2(acc, abs(v[u].z));
      acc = __vmaxu2(acc, abs(v[u].w));
    }
  }
  for (; i < vec_count; i += stride) {
    const uint4 v = __ldg(x + i);
    acc = __vmaxu2(acc, abs(v.x));
    acc = __vmaxu2(acc, abs(v.y));
    acc = __vmaxu2(acc, abs(v.z));
    acc = __vmaxu2(acc, abs(v.w));
  }
  const int64_t tid = static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x;
  for (int64_t t = tid; t < tail_count; t += stride) acc = __vmaxu2(acc, abs(tail[t]));
  return acc;
}

__global__ void __launch_bounds__(kThreads)
    AmaxKernel(const uint4* __restrict__ x, int64_t vec_count, const uint16_t* __restrict__ tail,
               int64_t tail_count, float* amax) {
  uint32_t acc = ThreadMax<false>(x, vec_count, tail, tail_count);
  // A thread that saw a NaN reads its share again with the NaN halves masked (rare: the
  // masking on every word costs more than the max itself).
  if (detail::HasNan(detail::MaxHalves(acc))) acc = ThreadMax<true>(x, vec_count, tail, tail_count);
  const uint32_t block_max = BlockMax(acc);
  // Zero is the reduction's identity and the value *amax was reset to.
  if (threadIdx.x == 0 && block_max != 0) {
    detail::AtomicMaxNonNegative(amax, detail::Bf16AbsBitsToFloat(block_max));
  }
}

}  // namespace

cudaError_t Amax(const __nv_bfloat16* x, int64_t n, float* amax, cudaStream_t stream) {
  if (n < 0 || amax == nullptr || (n > 0 && x == nullptr)) return cudaErrorInvalidValue;
  cudaError_t err = cudaMemsetAsync(amax, 0, sizeof(float), stream);
  if (err != cudaSuccess || n == 0) return err;
  // A misaligned base takes the scalar path for everything; cudaMalloc'd tensors never do.
  const bool aligned = detail::IsAligned(x, 16);
  const int64_t vec_count = aligned ? n / kBf16PerVec : 0;
  const int64_t tail_start = vec_count * kBf16PerVec;
  const auto* tail = reinterpret_cast<const uint16_t*>(x) + tail_start;
  const unsigned blocks =
      detail::GridStrideBlocks(std::max<int64_t>(vec_count, n - tail_start), kThreads, 4);
  AmaxKernel<<<blocks, kThreads, 0, stream>>>(reinterpret_cast<const uint4*>(x), vec_count, tail,
                                              n - tail_start, amax);
  return cudaGetLastError();
}

}  // namespace gemmprof::kernels
