// A grow-only pool of named device buffers, so consecutive items of a job reuse memory
// instead of paying cudaMalloc/cudaFree (which synchronize the device) per item.
#pragma once

#include <atomic>
#include <cstddef>
#include <map>
#include <string>

#include "kernels/cuda_handles.h"

namespace gemmprof::kernels {

// Get and Clear belong to the runner's one worker. HeldBytes may be called from any
// thread (the API's submission checks call CanImplement while the worker measures).
class DevicePool {
 public:
  // A buffer of at least `bytes` for `slot`; grows (free, then allocate) when too small.
  // Contents are undefined after a grow. ResourceExhausted when the device is full.
  absl::StatusOr<void*> Get(const std::string& slot, size_t bytes) {
    DeviceBuffer& b = slots_[slot];
    if (b.bytes() < bytes) {
      // Free first so the old and new buffers never need to fit together.
      held_bytes_ -= b.bytes();
      b = DeviceBuffer();
      ASSIGN_OR_RETURN(b, DeviceBuffer::Create(RoundUp(bytes)));
      held_bytes_ += b.bytes();
    }
    return b.get();
  }
  template <typename T>
  absl::StatusOr<T*> GetAs(const std::string& slot, size_t count) {
    ASSIGN_OR_RETURN(void* p, Get(slot, count * sizeof(T)));
    return static_cast<T*>(p);
  }
  // Bytes currently held (reusable by later items).
  size_t HeldBytes() const { return held_bytes_.load(); }
  // Frees everything (e.g. before a large item that needs the whole device).
  void Clear() {
    slots_.clear();
    held_bytes_ = 0;
  }

 private:
  // 2 MiB granularity keeps small growth steps from reallocating every item.
  static size_t RoundUp(size_t bytes) {
    constexpr size_t kGrain = size_t{2} << 20;
    return (bytes + kGrain - 1) / kGrain * kGrain;
  }
  std::map<std::string, DeviceBuffer> slots_;
  // Kept beside the map so HeldBytes never walks it while the worker changes it.
  std::atomic<size_t> held_bytes_{0};
};

}  // namespace gemmprof::kernels
