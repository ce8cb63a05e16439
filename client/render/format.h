// Number, time and label formatting shared by every renderer. Pure; thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/job.h"

namespace gemmprof::client::render {

// Milliseconds with 4 significant-ish digits: "12.35", "1.235", "0.1235".
std::string FormatMs(double ms);
// TFLOP/s with one decimal: "812.4".
std::string FormatTflops(double tflops);
// A speedup or time ratio: "1.52x".
std::string FormatRatio(double ratio);
// A percentage with one decimal and a sign when asked: "12.3%", "+12.3%".
std::string FormatPercent(double percent, bool with_sign = false);
// A count with thousands separators: "1,842".
std::string FormatCount(int64_t count);
// Fixed decimals, no trailing garbage: FormatFixed(1.5, 2) == "1.50".
std::string FormatFixed(double value, int decimals);
// Unix epoch milliseconds as "2026-11-20 10:00:00 UTC"; 0 gives "-".
std::string FormatUtc(int64_t unix_ms);
// Unix epoch milliseconds as ISO 8601 "2026-11-20T10:00:00Z", for CSV and JSON; 0 gives "".
std::string FormatIsoUtc(int64_t unix_ms);
// A duration in milliseconds as "3d 4h", "2h 5m", "4m 10s", "12s".
std::string FormatDuration(int64_t duration_ms);
// Bytes as GiB with one decimal: "80.0 GiB".
std::string FormatGib(int64_t bytes);

// TFLOP/s of a measured item: flops (measurement's, or the op's) over the median.
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
// "fprop qkv 4096x4096x12288" (+ " x8 groups" for grouped ops).
std::string OpLabel(const core::GemmOp& op);
// "fprop qkv 4096x4096x12288 fp8-current/autocast".
std::string ItemLabel(const core::ItemRecord& item);
// "Fprop", "Dgrad", "Wgrad".
std::string_view PassTitle(core::Pass pass);

}  // namespace gemmprof::client::render
