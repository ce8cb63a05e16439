#include "kernels/timing/energy_window.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <deque>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/stats.h"
#include "kernels/cuda/cuda_check.h"

namespace gemmprof::kernels {
namespace {

using Clock = std::chrono::steady_clock;

double Seconds(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

// A counter update seen: the counter's value, when it was seen, and how many launches
// had completed by then.
struct Edge {
  uint64_t mj = 0;
  Clock::time_point at;
  int64_t completed = 0;
};

// Launches in flight, each followed by an event; completed ones are counted and their
// events reused.
class LaunchQueue {
 public:
  LaunchQueue(cudaStream_t stream, const std::function<absl::Status()>& launch, size_t depth)
      : stream_(stream), launch_(launch), depth_(depth) {}
  ~LaunchQueue() {
    (void)cudaStreamSynchronize(stream_);
    for (cudaEvent_t e : free_) (void)cudaEventDestroy(e);
    for (cudaEvent_t e : in_flight_) (void)cudaEventDestroy(e);
  }
  LaunchQueue(const LaunchQueue&) = delete;
  LaunchQueue& operator=(const LaunchQueue&) = delete;

  // Counts the launches completed since the last call, then launches until `depth` are
  // in flight.
  absl::Status Pump() {
    while (!in_flight_.empty()) {
      const cudaError_t q = cudaEventQuery(in_flight_.front());
      if (q == cudaErrorNotReady) break;
      CUDA_RETURN_IF_ERROR(q);
      free_.push_back(in_flight_.front());
      in_flight_.pop_front();
      ++completed_;
    }
    while (in_flight_.size() < depth_) {
      RETURN_IF_ERROR(launch_());
      cudaEvent_t e = nullptr;
      if (free_.empty()) {
        CUDA_RETURN_IF_ERROR(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
      } else {
        e = free_.back();
        free_.pop_back();
      }
      CUDA_RETURN_IF_ERROR(cudaEventRecord(e, stream_));
      in_flight_.push_back(e);
    }
    return absl::OkStatus();
  }
  int64_t completed() const { return completed_; }

 private:
  cudaStream_t stream_;
  const std::function<absl::Status()>& launch_;
  size_t depth_;
  std::deque<cudaEvent_t> in_flight_;
  std::vector<cudaEvent_t> free_;
  int64_t completed_ = 0;
};

// The window's figures from its edges (first to last).
core::Energy FromEdges(const std::vector<Edge>& edges, int64_t iterations_per_launch,
                       double sampled_power_w) {
  const Edge& first = edges.front();
  const Edge& last = edges.back();
  core::Energy e;
  const double joules = static_cast<double>(last.mj - first.mj) / 1000.0;
  const double iterations =
      static_cast<double>(last.completed - first.completed) * iterations_per_launch;
  e.window_s = Seconds(first.at, last.at);
  e.counter_updates = static_cast<int32_t>(edges.size() - 1);
  e.power_w = e.window_s > 0 ? joules / e.window_s : 0;
  e.sampled_power_w = sampled_power_w;
  if (iterations <= 0) return e;
  e.joules = joules / iterations;
  e.iteration_ms = 1000 * e.window_s / iterations;
  // Each counter period's joules and GEMMs. The figure is a ratio of sums, so its interval
  // is the ratio estimator's: the periods' residuals from it (a period's joules less the
  // figure x its GEMMs), drift-corrected as rounds are. Short or uneven periods weigh by
  // their work; the count's granularity (whole launches at each edge) shows in them.
  std::vector<double> residuals;
  for (size_t i = 1; i < edges.size(); ++i) {
    const double n =
        static_cast<double>(edges[i].completed - edges[i - 1].completed) * iterations_per_launch;
    const double j = static_cast<double>(edges[i].mj - edges[i - 1].mj) / 1000.0;
    if (n > 0) e.period_joules.push_back(j / n);
    residuals.push_back(j - e.joules * n);
  }
  const size_t k = residuals.size();
  if (k < 2) {
    e.joules_low = e.joules_high = e.joules;
    return e;
  }
  double sum_sq = 0;
  for (double r : residuals) sum_sq += r * r;
  e.n_eff = core::stats::EffectiveCount(residuals);
  const double se = std::sqrt(sum_sq * k / (k - 1)) / iterations *
                    std::sqrt(static_cast<double>(k) / std::max(e.n_eff, 1.0));
  const double half = core::stats::StudentT975(std::max(e.n_eff - 1, 1.0)) * se;
  e.joules_low = std::max(0.0, e.joules - half);
  e.joules_high = e.joules + half;
  return e;
}

}  // namespace

absl::StatusOr<double> RestingPowerW(const NvmlDevice& nvml, double max_s) {
  constexpr size_t kReadings = 10;
  const Clock::time_point start = Clock::now();
  std::deque<double> last;
  while (true) {
    ASSIGN_OR_RETURN(const double w, nvml.PowerW());
    last.push_back(w);
    if (last.size() > kReadings) last.pop_front();
    if (last.size() == kReadings) {
      std::vector<double> sorted(last.begin(), last.end());
      std::sort(sorted.begin(), sorted.end());
      const double median = (sorted[kReadings / 2 - 1] + sorted[kReadings / 2]) / 2;
      const bool settled = sorted.front() >= 0.97 * median && sorted.back() <= 1.03 * median;
      if (settled || Seconds(start, Clock::now()) >= max_s) return median;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

absl::StatusOr<core::Energy> MeasureEnergyWindow(const NvmlDevice& nvml, cudaStream_t stream,
                                                 const std::function<absl::Status()>& launch,
                                                 int64_t iterations_per_launch, double launch_ms,
                                                 const EnergyWindowOptions& options) {
  ASSIGN_OR_RETURN(uint64_t mj, nvml.TotalEnergyMj());
  const size_t depth =
      static_cast<size_t>(std::clamp(std::ceil(20.0 / std::max(launch_ms, 1e-3)), 2.0, 512.0));
  LaunchQueue queue(stream, launch, depth);
  const Clock::time_point start = Clock::now();
  Clock::time_point last_change = start;
  std::vector<Edge> edges;
  double sampled_sum = 0;
  int64_t sampled = 0;
  Clock::time_point next_sample = start;
  while (true) {
    RETURN_IF_ERROR(queue.Pump());
    const Clock::time_point now = Clock::now();
    ASSIGN_OR_RETURN(const uint64_t value, nvml.TotalEnergyMj());
    if (value != mj) {
      mj = value;
      last_change = now;
      // The window opens on the first edge after the power state settled.
      if (!edges.empty() || Seconds(start, now) >= options.settle_s)
        edges.push_back({value, now, queue.completed()});
      if (edges.size() > static_cast<size_t>(options.min_updates) &&
          Seconds(edges.front().at, now) >= options.min_window_s)
        break;
    }
    if (!edges.empty() && now >= next_sample) {
      ASSIGN_OR_RETURN(const double w, nvml.PowerW());
      sampled_sum += w;
      ++sampled;
      next_sample = now + std::chrono::milliseconds(5);
    }
    if (Seconds(last_change, now) > options.max_s) {
      return absl::DeadlineExceededError(absl::StrCat("the energy counter did not change for ",
                                                      options.max_s, " s while the GEMM ran"));
    }
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(stream));
  return FromEdges(edges, iterations_per_launch, sampled > 0 ? sampled_sum / sampled : 0);
}

}  // namespace gemmprof::kernels
