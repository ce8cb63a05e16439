#include "kernels/timing/telemetry_sampler.h"

#include <algorithm>
#include <chrono>

namespace gemmprof::kernels {

TelemetrySampler::TelemetrySampler(const NvmlDevice* nvml, int period_ms)
    : nvml_(nvml), period_ms_(period_ms) {}

TelemetrySampler::~TelemetrySampler() {
  if (running_.load()) (void)Stop();
}

void TelemetrySampler::TakeSample() {
  if (nvml_ == nullptr) return;
  absl::StatusOr<NvmlSample> s = nvml_->Sample();
  if (s.ok()) samples_.push_back(*s);
}

void TelemetrySampler::Start() {
  samples_.clear();
  TakeSample();
  running_.store(true);
  thread_ = std::thread([this] {
    while (running_.load()) {
      std::this_thread::sleep_for(std::chrono::milliseconds(period_ms_));
      if (running_.load()) TakeSample();
    }
  });
}

core::Telemetry TelemetrySampler::Stop() {
  running_.store(false);
  if (thread_.joinable()) thread_.join();
  TakeSample();
  core::Telemetry t;
  if (samples_.empty()) return t;
  t.sm_clock_mhz_min = samples_.front().sm_clock_mhz;
  double power_sum = 0, clock_sum = 0;
  for (const NvmlSample& s : samples_) {
    clock_sum += s.sm_clock_mhz;
    t.sm_clock_mhz_min = std::min(t.sm_clock_mhz_min, s.sm_clock_mhz);
    t.sm_clock_mhz_max = std::max(t.sm_clock_mhz_max, s.sm_clock_mhz);
    t.mem_clock_mhz = std::max(t.mem_clock_mhz, s.mem_clock_mhz);
    t.power_w_max = std::max(t.power_w_max, s.power_w);
    t.temp_c_max = std::max(t.temp_c_max, s.temp_c);
    power_sum += s.power_w;
    t.throttle_reasons |= s.clocks_event_reasons;
    if ((s.clocks_event_reasons & kThrottleReasonMask) != 0) ++t.throttled_samples;
  }
  t.power_w_avg = power_sum / static_cast<double>(samples_.size());
  // The clock %-of-peak figures use (core/device_peaks.h).
  t.sm_clock_mhz_mean = clock_sum / static_cast<double>(samples_.size());
  t.telemetry_samples = static_cast<int64_t>(samples_.size());
  return t;
}

}  // namespace gemmprof::kernels
