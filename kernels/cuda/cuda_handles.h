// Move-only RAII owners of CUDA runtime objects: device buffers, pinned host memory,
// streams, events and executable graphs. Each Create* returns a Status instead of
// throwing; destructors never fail loudly (errors at teardown have nowhere to go).
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <utility>

#include "kernels/cuda/cuda_check.h"

namespace gemmprof::kernels {

// Owns a pointer released by `Free` on destruction. The base of the wrappers below.
template <typename T, cudaError_t (*Free)(T)>
class UniqueCudaHandle {
 public:
  UniqueCudaHandle() = default;
  explicit UniqueCudaHandle(T h) : h_(h) {}
  ~UniqueCudaHandle() { Reset(); }
  UniqueCudaHandle(UniqueCudaHandle&& o) noexcept : h_(std::exchange(o.h_, T{})) {}
  UniqueCudaHandle& operator=(UniqueCudaHandle&& o) noexcept {
    if (this != &o) {
      Reset();
      h_ = std::exchange(o.h_, T{});
    }
    return *this;
  }
  UniqueCudaHandle(const UniqueCudaHandle&) = delete;
  UniqueCudaHandle& operator=(const UniqueCudaHandle&) = delete;

  T get() const { return h_; }
  explicit operator bool() const { return h_ != T{}; }
  void Reset() {
    if (h_ != T{}) (void)Free(h_);
    h_ = T{};
  }

 private:
  T h_{};
};

// A cudaMalloc'd device allocation of `bytes()` bytes.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  // Allocates `bytes` (0 gives an empty buffer). ResourceExhausted when the device is full.
  static absl::StatusOr<DeviceBuffer> Create(size_t bytes) {
    DeviceBuffer b;
    if (bytes == 0) return b;
    void* p = nullptr;
    CUDA_RETURN_IF_ERROR(cudaMalloc(&p, bytes));
    b.ptr_ = UniqueCudaHandle<void*, cudaFree>(p);
    b.bytes_ = bytes;
    return b;
  }
  void* get() const { return ptr_.get(); }
  template <typename T>
  T* as() const {
    return static_cast<T*>(ptr_.get());
  }
  size_t bytes() const { return bytes_; }

 private:
  UniqueCudaHandle<void*, cudaFree> ptr_;
  size_t bytes_ = 0;
};

// Page-locked, device-mapped host memory (cudaHostAllocMapped).
class PinnedHostBuffer {
 public:
  PinnedHostBuffer() = default;
  static absl::StatusOr<PinnedHostBuffer> Create(size_t bytes) {
    PinnedHostBuffer b;
    void* p = nullptr;
    CUDA_RETURN_IF_ERROR(cudaHostAlloc(&p, bytes, cudaHostAllocMapped));
    b.ptr_ = UniqueCudaHandle<void*, cudaFreeHost>(p);
    return b;
  }
  void* get() const { return ptr_.get(); }
  // The device-side address of the same memory.
  absl::StatusOr<void*> DevicePointer() const {
    void* d = nullptr;
    CUDA_RETURN_IF_ERROR(cudaHostGetDevicePointer(&d, ptr_.get(), 0));
    return d;
  }

 private:
  UniqueCudaHandle<void*, cudaFreeHost> ptr_;
};

// A non-blocking stream.
class CudaStream {
 public:
  CudaStream() = default;
  static absl::StatusOr<CudaStream> Create() {
    cudaStream_t s = nullptr;
    CUDA_RETURN_IF_ERROR(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    CudaStream out;
    out.s_ = UniqueCudaHandle<cudaStream_t, cudaStreamDestroy>(s);
    return out;
  }
  cudaStream_t get() const { return s_.get(); }
  absl::Status Synchronize() const {
    CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(s_.get()));
    return absl::OkStatus();
  }

 private:
  UniqueCudaHandle<cudaStream_t, cudaStreamDestroy> s_;
};

// A timing event.
class CudaEvent {
 public:
  CudaEvent() = default;
  static absl::StatusOr<CudaEvent> Create() {
    cudaEvent_t e = nullptr;
    CUDA_RETURN_IF_ERROR(cudaEventCreate(&e));
    CudaEvent out;
    out.e_ = UniqueCudaHandle<cudaEvent_t, cudaEventDestroy>(e);
    return out;
  }
  cudaEvent_t get() const { return e_.get(); }
  absl::Status Record(cudaStream_t s) const {
    CUDA_RETURN_IF_ERROR(cudaEventRecord(e_.get(), s));
    return absl::OkStatus();
  }
  // Milliseconds from `start` to this event; both must have completed.
  absl::StatusOr<float> ElapsedSince(const CudaEvent& start) const {
    float ms = 0;
    CUDA_RETURN_IF_ERROR(cudaEventElapsedTime(&ms, start.get(), e_.get()));
    return ms;
  }

 private:
  UniqueCudaHandle<cudaEvent_t, cudaEventDestroy> e_;
};

// An instantiated CUDA graph captured from a stream.
class CudaGraphExec {
 public:
  CudaGraphExec() = default;
  // Captures what `enqueue(stream)` launches on `stream` (nothing runs during capture)
  // and instantiates it. The callable returns absl::Status.
  template <typename F>
  static absl::StatusOr<CudaGraphExec> Capture(cudaStream_t stream, F&& enqueue) {
    CUDA_RETURN_IF_ERROR(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
    absl::Status body = enqueue(stream);
    cudaGraph_t graph = nullptr;
    absl::Status end = CUDA_STATUS(cudaStreamEndCapture(stream, &graph));
    UniqueCudaHandle<cudaGraph_t, cudaGraphDestroy> owned(graph);
    RETURN_IF_ERROR(body);
    RETURN_IF_ERROR(end);
    size_t nodes = 0;
    CUDA_RETURN_IF_ERROR(cudaGraphGetNodes(graph, nullptr, &nodes));
    cudaGraphExec_t exec = nullptr;
    CUDA_RETURN_IF_ERROR(cudaGraphInstantiate(&exec, graph, 0));
    CudaGraphExec out;
    out.exec_ = UniqueCudaHandle<cudaGraphExec_t, cudaGraphExecDestroy>(exec);
    out.nodes_ = nodes;
    return out;
  }
  cudaGraphExec_t get() const { return exec_.get(); }
  // Operations in the graph (kernels, memsets, ...).
  size_t nodes() const { return nodes_; }
  absl::Status Launch(cudaStream_t stream) const {
    CUDA_RETURN_IF_ERROR(cudaGraphLaunch(exec_.get(), stream));
    return absl::OkStatus();
  }

 private:
  UniqueCudaHandle<cudaGraphExec_t, cudaGraphExecDestroy> exec_;
  size_t nodes_ = 0;
};

}  // namespace gemmprof::kernels
