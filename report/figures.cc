#include "report/figures.h"

#include "core/device_peaks.h"

namespace gemmprof::report {

double HeadlineMs(const core::Measurement& m) {
  return m.isolated.present() ? m.isolated.center_ms : m.time.median_ms;
}

double TflopsOf(const core::WorkItem& item, const core::Measurement& m) {
  if (m.time.median_ms <= 0) return 0;
  const double flops = m.flops > 0 ? m.flops : item.op.Flops();
  return flops / (m.time.median_ms * 1e-3) / 1e12;
}

double TflopsOf(const core::ItemRecord& item) {
  return item.result ? TflopsOf(item.item, *item.result) : 0;
}

Efficiency EfficiencyOf(const core::ItemRecord& item, const core::DeviceInfo& device) {
  Efficiency e;
  if (!item.result || device.backend == "host-reference" || item.result->time.median_ms <= 0) {
    return e;
  }
  const core::Measurement& m = *item.result;
  const double clock = core::ItemSmClockMhz(m.telemetry);
  const double peak = core::DensePeakFlops(device.sm, device.sm_count, clock, item.item.recipe);
  if (clock > 0) e.sm_clock_mhz = clock;
  if (peak > 0) {
    e.peak_tflops = peak / 1e12;
    e.of_peak = TflopsOf(item) * 1e12 / peak;
  }
  if (m.copy_bytes_per_s > 0 && m.bytes > 0) {
    e.of_copy_bandwidth = m.bytes / (m.time.median_ms * 1e-3) / m.copy_bytes_per_s;
  }
  if (m.copy_bytes_per_s > 0 && m.quant_bytes > 0 && m.quant_ms > 0) {
    e.quant_of_copy_bandwidth = m.quant_bytes / (m.quant_ms * 1e-3) / m.copy_bytes_per_s;
  }
  return e;
}

}  // namespace gemmprof::report
