// What the store benchmarks share: the devices results are filed under, and p50/p99 of
// a timed call.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <functional>
#include <vector>

#include "core/job.h"
#include "core/result.h"

namespace gemmprof::bench {

// Device 0 is an H100, any other an H200 (same sm, driver and library versions).
inline core::DeviceInfo BenchDevice(int which) {
  core::DeviceInfo d;
  d.backend = "cuda";
  d.name = which == 0 ? "NVIDIA H100 80GB HBM3" : "NVIDIA H200";
  d.uuid = which == 0 ? "GPU-5f2b1c3e-0000" : "GPU-9a7d4e21-0001";
  d.sm = 90;
  d.sm_count = 132;
  d.memory_bytes = int64_t{80} << 30;
  d.driver_version = "580.65.06";
  d.cuda_version = "13.0";
  d.cublaslt_version = "13.1.0";
  d.gemmprof_version = "0.1.0";
  for (core::Recipe r : core::AllRecipes()) d.recipes.push_back({r, true, ""});
  return d;
}

struct Percentiles {
  double p50_ms = 0, p99_ms = 0;
};

// Calls op(0), ..., op(calls - 1), each timed on its own.
inline Percentiles TimeCalls(int calls, const std::function<void(int)>& op) {
  using Clock = std::chrono::steady_clock;
  std::vector<double> ms;
  for (int i = 0; i < calls; ++i) {
    const auto start = Clock::now();
    op(i);
    ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - start).count());
  }
  std::sort(ms.begin(), ms.end());
  auto at = [&](double q) { return ms[static_cast<size_t>(q * (ms.size() - 1) + 0.5)]; };
  return {at(0.50), at(0.99)};
}

}  // namespace gemmprof::bench
