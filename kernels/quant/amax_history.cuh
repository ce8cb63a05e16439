// Delayed scaling's amax history on the device, the one copy of its rules: the roll (the
// new amax in, the oldest entry out) and the maximum a scale is taken from. Used by
// scale.cu's RollAmaxHistory / ScaleFromHistory (one launch each) and by cast_transpose.cu's
// step after the fused cast (both in one launch); gpu_quant_test compares the two paths bit
// for bit. Device code, one block of kThreads threads, every thread calling.
#pragma once

#include <cstdint>

namespace gemmprof::kernels::detail {

// Shifts the first `len` entries of `history` up by one (entry i - 1 to entry i) and
// writes `fresh` to entry 0. Returns this thread's maximum |x| over the entries it moved
// (the new history's entries 1 to len - 1; 0 where it moved none). fmaxf ignores a NaN
// entry. A history of up to kRegs x kThreads entries is read whole into registers before
// any entry is written (one round trip to memory); a longer one goes chunk by chunk,
// highest first, each chunk read before the one above it is written.
template <int kThreads, int kRegs>
__device__ float ShiftAmaxHistory(float* history, int32_t len, float fresh) {
  const int32_t tid = static_cast<int32_t>(threadIdx.x);
  float v = 0.0f;
  if (len <= kRegs * kThreads) {
    float moved[kRegs];
#pragma unroll
    for (int r = 0; r < kRegs; ++r) {
      const int32_t i = tid + r * kThreads;
      moved[r] = i >= 1 && i < len ? history[i - 1] : 0.0f;
      v = fmaxf(v, fabsf(moved[r]));
    }
    __syncthreads();
#pragma unroll
    for (int r = 0; r < kRegs; ++r) {
      const int32_t i = tid + r * kThreads;
      if (i >= 1 && i < len) history[i] = moved[r];
    }
  } else {
    for (int32_t base = ((len - 1) / kThreads) * kThreads; base >= 0; base -= kThreads) {
      const int32_t i = base + tid;
      float moved = 0.0f;
      if (i >= 1 && i < len) moved = history[i - 1];
      v = fmaxf(v, fabsf(moved));
      __syncthreads();
      if (i >= 1 && i < len) history[i] = moved;
      __syncthreads();
    }
  }
  if (tid == 0 && len > 0) history[0] = fresh;
  return v;
}

// The maximum of every thread's v over the block, returned to every thread. warp_max:
// kThreads / 32 floats of shared memory.
template <int kThreads>
__device__ float BlockMax(float v, float* warp_max) {
  static_assert(kThreads % 32 == 0 && kThreads <= 1024, "whole warps, one block");
  for (int m = 16; m > 0; m >>= 1) v = fmaxf(v, __shfl_xor_sync(0xFFFFFFFFu, v, m));
  if (threadIdx.x % 32 == 0) warp_max[threadIdx.x / 32] = v;
  __syncthreads();
  v = 0.0f;
#pragma unroll
  for (int w = 0; w < kThreads / 32; ++w) v = fmaxf(v, warp_max[w]);
  return v;
}

}  // namespace gemmprof::kernels::detail
