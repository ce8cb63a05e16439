// Figures derived from one measurement.
#include "report/figures.h"

#include <gtest/gtest.h>

namespace gemmprof::report {
namespace {

using core::Mode;
using core::Recipe;

// %-of-peak at the measured clock: H100 SXM, 132 SMs at 1500 MHz, BF16 4096 FLOP/clk/SM
// = 811.0 TFLOP/s dense; FP8 twice that.
TEST(EfficiencyTest, PeakAtTheMeasuredClockAndBandwidthFractions) {
  core::DeviceInfo d;
  d.backend = "cuda";
  d.sm = 90;
  d.sm_count = 132;
  core::ItemRecord item;
  item.item.recipe = Recipe::kBf16;
  item.item.op.shape = {4096, 4096, 4096};
  core::Measurement m;
  m.flops = 2.0 * 4096 * 4096 * 4096;
  m.time.median_ms = 0.25;  // 549.8 TFLOP/s
  m.telemetry.sm_clock_mhz_mean = 1500;
  m.bytes = 100e6;
  m.copy_bytes_per_s = 2e12;  // 100 MB in 0.25 ms = 0.4 TB/s = 20% of copy
  m.quant_bytes = 10e6;
  m.quant_ms = 0.01;  // 1 TB/s = 50%
  item.result = m;
  const Efficiency e = EfficiencyOf(item, d);
  const double peak = 132 * 1500e6 * 4096;
  ASSERT_TRUE(e.of_peak && e.peak_tflops && e.sm_clock_mhz);
  EXPECT_DOUBLE_EQ(*e.sm_clock_mhz, 1500);
  EXPECT_NEAR(*e.peak_tflops, peak / 1e12, 1e-9);
  EXPECT_NEAR(*e.of_peak, m.flops / 0.25e-3 / peak, 1e-12);
  EXPECT_NEAR(*e.of_copy_bandwidth, 0.2, 1e-12);
  EXPECT_NEAR(*e.quant_of_copy_bandwidth, 0.5, 1e-12);
  item.item.recipe = Recipe::kFp8Rowwise;
  EXPECT_NEAR(*EfficiencyOf(item, d).of_peak, m.flops / 0.25e-3 / (2 * peak), 1e-12);
  // Results stored before the mean clock: the middle of min and max.
  item.result->telemetry.sm_clock_mhz_mean = 0;
  item.result->telemetry.sm_clock_mhz_min = 1400;
  item.result->telemetry.sm_clock_mhz_max = 1600;
  EXPECT_DOUBLE_EQ(*EfficiencyOf(item, d).sm_clock_mhz, 1500);
  // Unknown: no clock sampled, a type sm_90 lacks, the host reference.
  item.result->telemetry = {};
  EXPECT_FALSE(EfficiencyOf(item, d).of_peak);
  item.result->telemetry.sm_clock_mhz_mean = 1500;
  item.item.recipe = Recipe::kNvfp4;
  EXPECT_FALSE(EfficiencyOf(item, d).of_peak);
  d.backend = "host-reference";
  d.sm = 0;
  const Efficiency host = EfficiencyOf(item, d);
  EXPECT_FALSE(host.of_peak || host.of_copy_bandwidth || host.sm_clock_mhz);
}

TEST(HeadlineTest, TheIsolatedEstimateElseTheMedian) {
  core::Measurement m;
  m.time.median_ms = 2.0;
  EXPECT_DOUBLE_EQ(HeadlineMs(m), 2.0);
  m.isolated = {1.5, 1.4, 1.6, 10, 10};
  EXPECT_DOUBLE_EQ(HeadlineMs(m), 1.5);
}

}  // namespace
}  // namespace gemmprof::report
