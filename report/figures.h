// Figures derived from one measurement: the headline time every table and total takes,
// throughput, and how close an item came to the hardware. Pure; thread-safe.
#pragma once

#include <optional>

#include "core/job.h"

namespace gemmprof::report {

// The headline time in ms: the interleaved rounds' estimate when measured so, else the
// median of iterations (results stored before rounds).
double HeadlineMs(const core::Measurement& m);

// TFLOP/s of a measurement of `item`: its flops (or the op's, where it has none) over the
// median; 0 without a positive median.
double TflopsOf(const core::WorkItem& item, const core::Measurement& m);
// The same for a measured item; 0 without a result.
double TflopsOf(const core::ItemRecord& item);

// How close a GPU item came to the hardware: achieved TFLOP/s (TflopsOf) over the dense
// tensor-core peak for its recipe's type at the SM clock measured during the item
// (core/device_peaks.h: SMs x clock x dense FLOP/clk/SM), and bytes moved per iteration
// over the copy bandwidth measured at job start; the quantization's bytes over its time
// likewise. Each is nullopt where it cannot be known (host reference, no clock sampled,
// an architecture or type the table lacks, no quantization timed).
struct Efficiency {
  std::optional<double> sm_clock_mhz, peak_tflops, of_peak, of_copy_bandwidth,
      quant_of_copy_bandwidth;
};
Efficiency EfficiencyOf(const core::ItemRecord& item, const core::DeviceInfo& device);

}  // namespace gemmprof::report
