// Small host-side helpers shared by the launchers of this folder (and the w4a16 decode
// kernel's): grid sizing, the alignment tests that pick a vectorized fast path, and the
// programmatic dependent launch.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <utility>

namespace gemmprof::kernels::detail {

// True when `p` (possibly null) is aligned to `bytes`; a null pointer counts as aligned
// because nothing is written through it.
inline bool IsAligned(const void* p, uintptr_t bytes) {
  return reinterpret_cast<uintptr_t>(p) % bytes == 0;
}

inline int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

// Number of SMs of the current device (0 when the query fails; callers use a floor).
inline int CurrentSmCount() {
  int device = 0;
  int sms = 0;
  if (cudaGetDevice(&device) != cudaSuccess) return 0;
  if (cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device) != cudaSuccess) {
    return 0;
  }
  return sms;
}

// Blocks for a grid-stride kernel: enough to fill every SM `blocks_per_sm` times, never
// more than the work needs.
inline unsigned GridStrideBlocks(int64_t work_items, int64_t items_per_block, int blocks_per_sm) {
  const int64_t needed = std::max<int64_t>(1, CeilDiv(work_items, items_per_block));
  const int64_t fill = std::max(1, CurrentSmCount()) * static_cast<int64_t>(blocks_per_sm);
  return static_cast<unsigned>(std::min(needed, fill));
}

// Launches `kernel` as a programmatic dependent of the work before it on `stream`: it may
// start while that work ends, so it must wait for it in the kernel (griddepcontrol.wait)
// before reading what that work writes.
template <class... Params, class... Args>
cudaError_t LaunchDependent(void (*kernel)(Params...), dim3 grid, dim3 block, cudaStream_t stream,
                            Args&&... args) {
  cudaLaunchConfig_t config = {};
  config.gridDim = grid;
  config.blockDim = block;
  config.stream = stream;
  cudaLaunchAttribute dependent = {};
  dependent.id = cudaLaunchAttributeProgrammaticStreamSerialization;
  dependent.val.programmaticStreamSerializationAllowed = 1;
  config.attrs = &dependent;
  config.numAttrs = 1;
  return cudaLaunchKernelEx(&config, kernel, std::forward<Args>(args)...);
}

}  // namespace gemmprof::kernels::detail
