// Per-tensor scale bookkeeping on the device: scale from an amax (current scaling), from
// an amax history (delayed scaling), and the history roll. Tiny kernels that keep the
// scaling state on the GPU so no step of an autocast iteration synchronizes with the host.
#include <cstdint>

#include "kernels/quant/amax_history.cuh"
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
  v = detail::BlockMax<kHistoryThreads>(v, warp_max);
  if (threadIdx.x == 0) WriteScale(v, fp8_max, scale, scale_inv);
}

// One block shifts the history up by one (amax_history.cuh).
__global__ void __launch_bounds__(kHistoryThreads)
    RollHistoryKernel(float* history, int32_t len, const float* new_amax) {
  detail::ShiftAmaxHistory<kHistoryThreads, 1>(history, len, *new_amax);
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
