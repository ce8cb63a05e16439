// A grow-only pool of named device buffers, so consecutive items of a job reuse memory
// instead of paying cudaMalloc/cudaFree (which synchronize the device) per item. Slots
// keep their memory between measurements; a use (BeginUse) marks the slots it asks for,
// and where the device runs short, ReleaseUnused frees the ones it has not asked for
// (another batch's operands, a larger shape's reference buffers).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>

#include "kernels/cuda/cuda_handles.h"

namespace gemmprof::kernels {

// Get and Clear belong to the runner's one worker. HeldBytes may be called from any
// thread (the API's submission checks call CanImplement while the worker measures).
class DevicePool {
 public:
  // A buffer of at least `bytes` for `slot`; grows (free, then allocate) when too small.
  // Contents are undefined after a grow. ResourceExhausted when the device is full.
  absl::StatusOr<void*> Get(const std::string& slot, size_t bytes) {
    Slot& held = slots_[slot];
    held.use = use_;
    DeviceBuffer& b = held.buffer;
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
  // Starts a use: from here, ReleaseUnused keeps only the slots Get has been asked for.
  void BeginUse() { ++use_; }
  // Frees the slots not asked for since BeginUse; the others stay valid.
  void ReleaseUnused() {
    for (auto it = slots_.begin(); it != slots_.end();) {
      if (it->second.use == use_) {
        ++it;
        continue;
      }
      held_bytes_ -= it->second.buffer.bytes();
      it = slots_.erase(it);
    }
  }
  // Frees one slot (no-op when absent): its next Get allocates exactly what it asks for.
  void Release(const std::string& slot) {
    auto it = slots_.find(slot);
    if (it == slots_.end()) return;
    held_bytes_ -= it->second.buffer.bytes();
    slots_.erase(it);
  }

 private:
  // 2 MiB granularity keeps small growth steps from reallocating every item.
  static size_t RoundUp(size_t bytes) {
    constexpr size_t kGrain = size_t{2} << 20;
    return (bytes + kGrain - 1) / kGrain * kGrain;
  }
  struct Slot {
    DeviceBuffer buffer;
    uint64_t use = 0;  // the use that last asked for it
  };
  std::map<std::string, Slot> slots_;
  uint64_t use_ = 0;
  // Kept beside the map so HeldBytes never walks it while the worker changes it.
  std::atomic<size_t> held_bytes_{0};
};

}  // namespace gemmprof::kernels
