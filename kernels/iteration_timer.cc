#include "kernels/iteration_timer.h"

#include <algorithm>
#include <atomic>

#include "kernels/device_kernels.h"

namespace gemmprof::kernels {
namespace {

// Samples per blocking kernel: at most kBatch, and few enough that the launch queue
// (about a thousand entries) never fills while the blocking kernel holds the stream: a
// graph launch takes an entry per node (an H200 run of 26-node fp8-block MoE items
// blocked the host in cudaGraphLaunch with 64 samples per batch until the blocking
// kernel timed out), and each sample adds its events and the L2 flush.
constexpr int kBatch = 64;
constexpr size_t kQueueBudget = 768;

int BatchFor(const CudaGraphExec& graph) {
  return static_cast<int>(std::clamp<size_t>(kQueueBudget / (graph.nodes() + 4), 1, kBatch));
}
// Long enough for the host to enqueue a batch on a busy machine; a timeout only costs
// clean samples, never correctness.
constexpr uint64_t kBlockTimeoutNs = 2'000'000'000;

}  // namespace

absl::StatusOr<IterationTimer> IterationTimer::Create() {
  IterationTimer t;
  ASSIGN_OR_RETURN(t.flag_, PinnedHostBuffer::Create(2 * sizeof(int32_t)));
  ASSIGN_OR_RETURN(void* d, t.flag_.DevicePointer());
  t.flag_device_ = static_cast<int32_t*>(d);
  return t;
}

absl::Status IterationTimer::TimeBatch(cudaStream_t stream, const CudaGraphExec& graph, int count,
                                       const TimerOptions& options, TimerResult* result) const {
  std::vector<CudaEvent> start(count), stop(count);
  for (int i = 0; i < count; ++i) {
    ASSIGN_OR_RETURN(start[i], CudaEvent::Create());
    ASSIGN_OR_RETURN(stop[i], CudaEvent::Create());
  }
  volatile int32_t* host = static_cast<volatile int32_t*>(flag_.get());
  host[0] = 0;
  host[1] = 0;
  std::atomic_thread_fence(std::memory_order_seq_cst);
  CUDA_RETURN_IF_ERROR(BlockOnHostFlag(flag_device_, flag_device_ + 1, kBlockTimeoutNs, stream));
  absl::Status enqueued = absl::OkStatus();
  for (int i = 0; i < count && enqueued.ok(); ++i) {
    if (options.flush_buffer != nullptr) {
      enqueued =
          CUDA_STATUS(cudaMemsetAsync(options.flush_buffer, i & 0xFF, options.flush_bytes, stream));
    }
    if (enqueued.ok()) enqueued = start[i].Record(stream);
    if (enqueued.ok()) enqueued = graph.Launch(stream);
    if (enqueued.ok()) enqueued = stop[i].Record(stream);
  }
  // Release the stream even after an enqueue error, or the blocking kernel would wait
  // out its timeout.
  std::atomic_thread_fence(std::memory_order_seq_cst);
  host[0] = 1;
  RETURN_IF_ERROR(enqueued);
  CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(stream));
  if (host[1] != 0 && result->notes.empty()) {
    result->notes = "blocking kernel timed out; samples may include launch gaps";
  }
  for (int i = 0; i < count; ++i) {
    ASSIGN_OR_RETURN(float ms, stop[i].ElapsedSince(start[i]));
    result->samples_ms.push_back(ms);
  }
  return absl::OkStatus();
}

absl::StatusOr<TimerResult> IterationTimer::Time(
    cudaStream_t stream, const std::function<absl::Status(cudaStream_t)>& iteration,
    const TimerOptions& options) const {
  ASSIGN_OR_RETURN(CudaGraphExec graph, CudaGraphExec::Capture(stream, iteration));
  for (int i = 0; i < options.warmup_iters; ++i) {
    if (options.flush_buffer != nullptr) {
      CUDA_RETURN_IF_ERROR(cudaMemsetAsync(options.flush_buffer, 0, options.flush_bytes, stream));
    }
    RETURN_IF_ERROR(graph.Launch(stream));
  }
  CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(stream));
  if (options.before_samples) options.before_samples();
  TimerResult result;
  result.samples_ms.reserve(options.timed_iters);
  const int batch = BatchFor(graph);
  for (int done = 0; done < options.timed_iters; done += batch) {
    RETURN_IF_ERROR(
        TimeBatch(stream, graph, std::min(batch, options.timed_iters - done), options, &result));
  }
  return result;
}

}  // namespace gemmprof::kernels
