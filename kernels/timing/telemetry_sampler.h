// Samples NVML on a background thread while an item's timed iterations run, and
// summarizes the readings into core::Telemetry.
#pragma once

#include <atomic>
#include <thread>
#include <vector>

#include "core/result.h"
#include "kernels/timing/nvml_library.h"

namespace gemmprof::kernels {

class TelemetrySampler {
 public:
  // `nvml` may be null (no NVML): the summary is then all zeros. Not owned.
  TelemetrySampler(const NvmlDevice* nvml, int period_ms);
  ~TelemetrySampler();
  TelemetrySampler(const TelemetrySampler&) = delete;
  TelemetrySampler& operator=(const TelemetrySampler&) = delete;

  // Starts sampling (one reading immediately, then every period).
  void Start();
  // Takes a last reading, stops the thread and returns the summary.
  core::Telemetry Stop();

 private:
  void TakeSample();
  const NvmlDevice* nvml_;
  int period_ms_;
  std::atomic<bool> running_{false};
  std::thread thread_;
  std::vector<NvmlSample> samples_;  // written by the thread only while running
};

}  // namespace gemmprof::kernels
