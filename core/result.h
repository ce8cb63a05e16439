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
  double median_ms = 0, mean_ms = 0, p20_ms = 0, p80_ms = 0, min_ms = 0, max_ms = 0, stdev_ms = 0;

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
  double sm_clock_mhz_mean = 0;  // mean of the samples (0: not recorded, results before)
};

// A center and its 95% confidence interval, estimated from per-round values of
// interleaved rounds (core/stats). rounds == 0: absent (a result measured before
// interleaved rounds, or a figure not measured).
struct Estimate {
  double center_ms = 0, ci_low_ms = 0, ci_high_ms = 0;
  int32_t rounds = 0;  // per-round values it came from
  double n_eff = 0;    // rounds corrected for lag-1 autocorrelation (drift)
  bool present() const { return rounds > 0; }
  // Half the interval's width over the center: 0.01 = "+-1%". 0 when absent.
  double RelHalfWidth() const;
  friend bool operator==(const Estimate&, const Estimate&) = default;
};

// Board energy of one item (TimingOptions.energy; docs/measurement.md "Energy"): after
// the item's rounds its back-to-back graph is replayed for a window of at least 1 s and 10
// updates of the board's energy counter, read on the counter's update edges. Units:
// joules, watts, seconds.
struct Energy {
  // Joules per iteration of the timed region (the GEMM, with its quantization in autocast
  // and dynamic, as the time): the counter's joules between the window's first and last
  // update edge over the iterations completed between them; the 95% interval is the ratio
  // estimator's over the window's counter periods.
  double joules = 0, joules_low = 0, joules_high = 0;
  std::vector<double> period_joules;  // per counter period, joules per iteration
  double n_eff = 0;                   // periods corrected for lag-1 autocorrelation
  double power_w = 0;                 // mean board power over the window (counter)
  // Mean of the board power NVML reported, sampled through the same window: a cross-check
  // of the counter (their ratio is the ratio of the two energies).
  double sampled_power_w = 0;
  double window_s = 0;          // first to last counter edge
  int32_t counter_updates = 0;  // counter updates in the window
  double iteration_ms = 0;      // the iteration's time within the window (events)
  // Board power before the job's warm-up, at rest: reported, never subtracted.
  double idle_power_w = 0;
  // Why there is no figure ("no energy counter on this board", "host reference runner");
  // empty when measured, or when energy was not asked for.
  std::string not_measured;
  bool present() const { return window_s > 0 && joules > 0; }
  friend bool operator==(const Energy&, const Energy&) = default;
};

// One item's measurement: raw figures; derived metrics are computed by readers.
struct Measurement {
  SampleStats time;       // the timed region per iteration
  double quant_ms = 0;    // median quantization share of the timed region (autocast)
  double flops = 0;       // per iteration
  double bytes = 0;       // minimum bytes moved per iteration
  std::string algorithm;  // cuBLASLt algorithm description, or "host-reference"
  Verification verification = Verification::kNotVerified;
  double rel_error = 0;        // ||out - ref|| / ||ref||
  double error_threshold = 0;  // the recipe's threshold it was judged against
  Accounting accounting = Accounting::kTrainingStep;
  bool fast_accum = false;
  Telemetry telemetry;
  std::string notes;  // anything that makes the number less trustworthy

  // Interleaved rounds (DESIGN.md "Measurement"). The items a report compares (the
  // recipes and modes of one GEMM) are measured together, round after round in changing
  // order; a round times every member once. All zero/empty in results stored before.
  Estimate isolated;             // one GEMM (iteration) per timed launch: the headline
  Estimate b2b;                  // per-GEMM time of b2b_count iterations back to back in one graph
  int32_t b2b_count = 0;         // N of the back-to-back figure; 0 = not measured
  std::vector<double> round_ms;  // isolated, per round, in round order (ms)
  std::vector<double> b2b_round_ms;    // back to back, per GEMM, per round (ms)
  std::vector<double> quant_round_ms;  // quantization alone, per round (ms); autocast only
  Estimate quant;                      // of quant_round_ms
  std::string group_uid;               // the measurement group; equal uid = same rounds (paired)
  int32_t group_members = 0;           // distinct pieces of GPU work in the group
  std::string work_key;                // what makes two items the same GPU work (auditable)
  int64_t shared_with_item =
      0;                        // > 0: identical GPU work as the item with this id, one measurement
  double quant_bytes = 0;       // minimum bytes the timed quantization moves per iteration
  double copy_bytes_per_s = 0;  // the device's measured copy bandwidth (job start)
  std::string stop_reason;      // "precision +-0.8% reached", "budget 2.0 s spent (+-1.4%)",
                                // "fixed 100 rounds", "deadline"

  // Kernel-only timing (TimingOptions.timing_backend kKernels; CUPTI activity records):
  // per iteration, the time the device ran the kernels it launches (their durations' sum;
  // an overlap, as a programmatic dependent launch makes, counted once), launch and graph
  // gaps left out. kernel_samples == 0: not measured.
  SampleStats kernel;          // every kernel of the isolated iteration (quantization + GEMM)
  double kernel_quant_ms = 0;  // median of the quantization kernels' share (autocast/dynamic)
  int32_t kernel_samples = 0;  // iterations the kernel figures come from
  std::string kernel_names;    // the kernels of one iteration, "name xN; ..." (GEMM first)
  // Measured in Nsight mode (JobSpec.profile): never used as a cached result.
  bool profiled = false;
  // The batch it was measured in (docs/measurement.md "Contexts"): the batch's id (the
  // queue's group_uid for it; the rounds' group_uid differs where the device measured the
  // batch's groups apart), the item's measurement context (core::ContextOf) and the GEMMs
  // the batch held (core::BatchGemms). Empty in results stored before contexts.
  std::string batch_id;
  std::string context;
  std::string batch_gemms;
  Energy energy;  // `submit --energy` only
};

struct RecipeSupport {
  Recipe recipe = Recipe::kBf16;
  bool supported = false;
  std::string reason;  // why not, e.g. "mxfp8 needs sm_100+, this is sm_90"
};

// The device a measurement is made on.
struct DeviceInfo {
  std::string backend;  // "cuda" or "host-reference"
  std::string name;     // e.g. "NVIDIA H100 80GB HBM3"
  std::string uuid;
  int32_t sm = 0;  // compute capability major*10+minor; 0 for host
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
