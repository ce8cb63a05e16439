#include "kernels/timing/iteration_timer.h"

#include <algorithm>
#include <atomic>

#include "kernels/cuda/device_kernels.h"

namespace gemmprof::kernels {
namespace {

// Samples per blocking kernel: at most kBatch, and few enough that the launch queue
// (about a thousand entries) never fills while the blocking kernel holds the stream: a
// graph launch takes an entry per node and each sample adds its events and the L2 flush,
// and a full queue blocks the host in cudaGraphLaunch until the blocking kernel times out.
constexpr size_t kBatch = 64;
// Long enough for the host to enqueue a batch on a busy machine; a timeout only costs
// clean samples, never correctness.
constexpr uint64_t kBlockTimeoutNs = 2'000'000'000;

// The L2 flush before sample i, if the options ask for one: a write of the flush buffer
// (cold), or a read of it (clean).
absl::Status FlushL2(const TimerOptions& options, size_t i, cudaStream_t stream) {
  if (options.flush_buffer == nullptr) return absl::OkStatus();
  if (options.flush_by_reading) {
    return CUDA_STATUS(
        ReadThroughL2(options.flush_buffer, options.flush_bytes & ~size_t{15}, stream));
  }
  return CUDA_STATUS(cudaMemsetAsync(options.flush_buffer, static_cast<int>(i & 0xFF),
                                     options.flush_bytes, stream));
}

}  // namespace

absl::StatusOr<IterationTimer> IterationTimer::Create() {
  IterationTimer t;
  ASSIGN_OR_RETURN(t.flag_, PinnedHostBuffer::Create(2 * sizeof(int32_t)));
  ASSIGN_OR_RETURN(void* d, t.flag_.DevicePointer());
  t.flag_device_ = static_cast<int32_t*>(d);
  return t;
}

absl::StatusOr<CudaGraphExec> IterationTimer::Capture(cudaStream_t stream,
                                                      const Iteration& iteration, int repeat) {
  return CudaGraphExec::Capture(stream, [&](cudaStream_t q) -> absl::Status {
    for (int i = 0; i < std::max(repeat, 1); ++i) RETURN_IF_ERROR(iteration(q));
    return absl::OkStatus();
  });
}

absl::Status IterationTimer::WarmUp(cudaStream_t stream, const CudaGraphExec& graph, int launches,
                                    const TimerOptions& options) {
  for (int i = 0; i < launches; ++i) {
    RETURN_IF_ERROR(FlushL2(options, i, stream));
    RETURN_IF_ERROR(graph.Launch(stream));
  }
  CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(stream));
  return absl::OkStatus();
}

absl::Status IterationTimer::TimeBatch(cudaStream_t stream, const std::vector<Visit>& visits,
                                       const std::vector<Sample>& batch,
                                       const TimerOptions& options,
                                       std::vector<std::vector<double>>* out,
                                       std::string* notes) const {
  const size_t count = batch.size();
  std::vector<CudaEvent> start(count), stop(count);
  for (size_t i = 0; i < count; ++i) {
    if (batch[i].rewarm) continue;
    ASSIGN_OR_RETURN(start[i], CudaEvent::Create());
    ASSIGN_OR_RETURN(stop[i], CudaEvent::Create());
  }
  volatile int32_t* host = static_cast<volatile int32_t*>(flag_.get());
  host[0] = 0;
  host[1] = 0;
  std::atomic_thread_fence(std::memory_order_seq_cst);
  CUDA_RETURN_IF_ERROR(BlockOnHostFlag(flag_device_, flag_device_ + 1, kBlockTimeoutNs, stream));
  absl::Status enqueued = absl::OkStatus();
  for (size_t i = 0; i < count && enqueued.ok(); ++i) {
    const CudaGraphExec& graph = *visits[batch[i].visit].graph;
    enqueued = FlushL2(options, i, stream);
    if (batch[i].rewarm) {
      if (enqueued.ok()) enqueued = graph.Launch(stream);
      continue;
    }
    if (enqueued.ok()) enqueued = start[i].Record(stream);
    if (enqueued.ok() && options.tagger != nullptr) enqueued = options.tagger->Mark(batch[i].visit);
    if (enqueued.ok()) {
      enqueued = graph.Launch(stream);
      if (options.tagger != nullptr) {
        absl::Status unmarked = options.tagger->Unmark();
        if (enqueued.ok()) enqueued = unmarked;
      }
    }
    if (enqueued.ok()) enqueued = stop[i].Record(stream);
  }
  // Release the stream even after an enqueue error, or the blocking kernel would wait
  // out its timeout.
  std::atomic_thread_fence(std::memory_order_seq_cst);
  host[0] = 1;
  RETURN_IF_ERROR(enqueued);
  CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(stream));
  if (host[1] != 0 && notes->empty()) {
    *notes = "blocking kernel timed out; samples may include launch gaps";
  }
  for (size_t i = 0; i < count; ++i) {
    if (batch[i].rewarm) continue;
    ASSIGN_OR_RETURN(float ms, stop[i].ElapsedSince(start[i]));
    const Visit& v = visits[batch[i].visit];
    (*out)[batch[i].visit].push_back(static_cast<double>(ms) / std::max(v.repeat, 1));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<std::vector<double>>> IterationTimer::TimeVisits(
    cudaStream_t stream, const std::vector<Visit>& visits, const TimerOptions& options,
    std::string* notes) const {
  std::vector<std::vector<double>> out(visits.size());
  std::vector<Sample> batch;
  size_t entries = 0;
  // A batch holds whole samples up to the launch queue's budget: each sample costs its
  // graph's nodes plus its events and flush.
  auto add = [&](int32_t visit, bool rewarm) -> absl::Status {
    const size_t cost = visits[visit].graph->nodes() + 4;
    if (!batch.empty() &&
        (entries + cost > IterationTimer::kQueueBudget || batch.size() >= kBatch)) {
      RETURN_IF_ERROR(TimeBatch(stream, visits, batch, options, &out, notes));
      batch.clear();
      entries = 0;
    }
    batch.push_back({visit, rewarm});
    entries += cost;
    return absl::OkStatus();
  };
  for (size_t v = 0; v < visits.size(); ++v) {
    out[v].reserve(visits[v].samples);
    if (visits[v].rewarm) RETURN_IF_ERROR(add(static_cast<int32_t>(v), true));
    for (int32_t i = 0; i < visits[v].samples; ++i) {
      RETURN_IF_ERROR(add(static_cast<int32_t>(v), false));
    }
  }
  if (!batch.empty()) RETURN_IF_ERROR(TimeBatch(stream, visits, batch, options, &out, notes));
  return out;
}

absl::StatusOr<TimerResult> IterationTimer::Time(cudaStream_t stream, const Iteration& iteration,
                                                 const TimerOptions& options) const {
  ASSIGN_OR_RETURN(CudaGraphExec graph, Capture(stream, iteration));
  RETURN_IF_ERROR(WarmUp(stream, graph, options.warmup_iters, options));
  if (options.before_samples) options.before_samples();
  TimerResult result;
  std::vector<Visit> visit = {{&graph, options.timed_iters, 1, false}};
  ASSIGN_OR_RETURN(auto samples, TimeVisits(stream, visit, options, &result.notes));
  result.samples_ms = std::move(samples[0]);
  return result;
}

}  // namespace gemmprof::kernels
