// Measurements and the device context they were made in.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/enums.h"

namespace gemmprof::core {

// Summary of per-iteration times. Units: milliseconds.
struct SampleStats {
  int64_t count = 0;
  double median_ms = 0, mean_ms = 0, p20_ms = 0, p80_ms = 0, min_ms = 0, max_ms = 0,
         stdev_ms = 0;

  // Computes the summary of `samples_ms` (any order; empty gives count 0).
  static SampleStats FromSamples(std::vector<double> samples_ms);
};

// NVML readings taken while an item ran (zeros where unavailable, e.g. host runner).
struct Telemetry {
  double sm_clock_mhz_min = 0, sm_clock_mhz_max = 0, mem_clock_mhz = 0;
  double power_w_avg = 0, power_w_max = 0, temp_c_max = 0;
  uint64_t throttle_reasons = 0;  // OR of NVML clocks-event reasons seen
  int64_t throttled_samples = 0;  // samples taken while a throttle reason was active
  int64_t telemetry_samples = 0;
};

// One item's measurement: raw figures; derived metrics are computed by readers.
struct Measurement {
  SampleStats time;             // the timed region per iteration
  double quant_ms = 0;          // median quantization share of the timed region (autocast)
  double flops = 0;             // per iteration
  double bytes = 0;             // minimum bytes moved per iteration
  std::string algorithm;        // cuBLASLt algorithm description, or "host-reference"
  Verification verification = Verification::kNotVerified;
  double rel_error = 0;         // ||out - ref|| / ||ref||
  double error_threshold = 0;   // the recipe's threshold it was judged against
  Accounting accounting = Accounting::kTrainingStep;
  bool fast_accum = false;
  Telemetry telemetry;
  std::string notes;            // anything that makes the number less trustworthy
};

struct RecipeSupport {
  Recipe recipe = Recipe::kBf16;
  bool supported = false;
  std::string reason;  // why not, e.g. "mxfp8 needs sm_100+, this is sm_90"
};

// The device a measurement is made on.
struct DeviceInfo {
  std::string backend;           // "cuda" or "host-reference"
  std::string name;              // e.g. "NVIDIA H100 80GB HBM3"
  std::string uuid;
  int32_t sm = 0;                // compute capability major*10+minor; 0 for host
  int32_t sm_count = 0;
  int64_t memory_bytes = 0;
  std::string driver_version;
  std::string cuda_version;
  std::string cublaslt_version;
  std::string gemmprof_version;
  std::vector<RecipeSupport> recipes;
  // Whether the daemon can run work on it now, and why not (e.g. its worker process failed
  // to start several times in a row). A live state, never part of a stored result.
  bool unavailable = false;
  std::string unavailable_reason;
};

}  // namespace gemmprof::core
