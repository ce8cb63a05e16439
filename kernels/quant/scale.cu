// Per-tensor scale bookkeeping on the device: scale from an amax (current scaling), from
// an amax history (delayed scaling), and the history roll. Tiny kernels that keep the
// scaling state on the GPU so no step of an autocast iteration synchronizes with the host.
#include <cstdint>

#include "kernels/quant/device_numerics.cuh"
#include "kernels/quant/quantize.h"

namespace gemmprof::kernels {
namespace {

constexpr int kHistoryThreads = 1024;

__device__ void WriteScale(float amax, float fp8_max, float* scale, float* scale_inv) {
  const float s = detail::ScaleFromAmax(amax, fp8_max);
  *scale = s;
  if (scale_inv != nullptr) *scale_inv = __fdiv_rn(1.0f, s);
}

__global__ void ComputeScaleKernel(const float* amax, float fp8_max, float* scale,
                                   float* scale_inv) {
  WriteScale(*amax, fp8_max, scale, scale_inv);
}

// One block: fmaxf-reduction of |history| (R7) or its most recent entry as it is.
__global__ void __launch_bounds__(kHistoryThreads)
    ScaleFromHistoryKernel(const float* history, int32_t len, bool most_recent, float fp8_max,
                           float* scale, float* scale_inv) {
  __shared__ float warp_max[kHistoryThreads / 32];
  if (most_recent) {
    if (threadIdx.x == 0) WriteScale(len > 0 ? history[0] : 0.0f, fp8_max, scale, scale_inv);
    return;
  }
  float v = 0.0f;
  for (int32_t i = threadIdx.x; i < len; i += kHistoryThreads) v = fmaxf(v, fabsf(history[i]));
  for (int m = 16; m > 0; m >>= 1) v = fmaxf(v, __shfl_xor_sync(0xFFFFFFFFu, v, m));
  if (threadIdx.x % 32 == 0) warp_max[threadIdx.x / 32] = v;
  __syncthreads();
  if (threadIdx.x >= 32) return;
  v = warp_max[threadIdx.x];
  for (int m = 16; m > 0; m >>= 1) v = fmaxf(v, __shfl_xor_sync(0xFFFFFFFFu, v, m));
  if (threadIdx.x == 0) WriteScale(v, fp8_max, scale, scale_inv);
}

// One block shifts the history up by one, highest chunk first, so every element is read
// before the chunk above it overwrites it.
__global__ void __launch_bounds__(kHistoryThreads)
    RollHistoryKernel(float* history, int32_t len, const float* new_amax) {
  const float fresh = *new_amax;
  for (int32_t base = ((len - 1) / kHistoryThreads) * kHistoryThreads; base >= 0;
       base -= kHistoryThreads) {
    const int32_t i = base + static_cast<int32_t>(threadIdx.x);
    float moved = 0.0f;
    if (i >= 1 && i < len) moved = history[i - 1];
    __syncthreads();
    if (i >= 1 && i < len) history[i] = moved;
    __syncthreads();
  }
  if (threadIdx.x == 0) history[0] = fresh;
}

}  // namespace

cudaError_t ComputeScale(const float* amax, Fp8Format f, float* scale, float* scale_inv,
                         cudaStream_t stream) {
  if (amax == nullptr || scale == nullptr) return cudaErrorInvalidValue;
  ComputeScaleKernel<<<1, 1, 0, stream>>>(amax, detail::Fp8MaxOf(f), scale, scale_inv);
  return cudaGetLastError();
}

cudaError_t ScaleFromHistory(const float* history, int32_t len, core::AmaxAlgo algo, Fp8Format f,
                             float* scale, float* scale_inv, cudaStream_t stream) {
  if (len < 0 || (len > 0 && history == nullptr) || scale == nullptr) {
    return cudaErrorInvalidValue;
  }
  ScaleFromHistoryKernel<<<1, kHistoryThreads, 0, stream>>>(
      history, len, algo == core::AmaxAlgo::kMostRecent, detail::Fp8MaxOf(f), scale, scale_inv);
  return cudaGetLastError();
}

cudaError_t RollAmaxHistory(float* history, int32_t len, const float* new_amax,
                            cudaStream_t stream) {
  if (len < 0 || new_amax == nullptr || (len > 0 && history == nullptr)) {
    return cudaErrorInvalidValue;
  }
  if (len == 0) return cudaSuccess;
  RollHistoryKernel<<<1, kHistoryThreads, 0, stream>>>(history, len, new_amax);
  return cudaGetLastError();
}

}  // namespace gemmprof::kernels
