#include "client/render/format.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>

#include "core/device_peaks.h"

namespace gemmprof::client::render {

std::string FormatFixed(double value, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.*f", decimals, value);
  return buf;
}

std::string FormatCount(int64_t count) {
  std::string digits = std::to_string(count < 0 ? -count : count);
  for (int i = static_cast<int>(digits.size()) - 3; i > 0; i -= 3) digits.insert(i, ",");
  return count < 0 ? "-" + digits : digits;
}

std::string FormatMs(double ms) {
  const double a = std::fabs(ms);
  if (a >= 100) return FormatFixed(ms, 1);
  if (a >= 10) return FormatFixed(ms, 2);
  if (a >= 1) return FormatFixed(ms, 3);
  return FormatFixed(ms, 4);
}

std::string FormatTflops(double tflops) {
  // Host-reference numbers are tiny; one decimal would print them all as 0.0.
  if (std::fabs(tflops) < 1) return FormatFixed(tflops, 4);
  return FormatFixed(tflops, 1);
}

std::string FormatRatio(double ratio) { return FormatFixed(ratio, 2) + "x"; }

std::string FormatPercent(double percent, bool with_sign) {
  std::string s = FormatFixed(percent, 1) + "%";
  if (with_sign && percent >= 0) s = "+" + s;
  return s;
}

namespace {

// `unix_ms` in UTC by strftime's `pattern`; `none` for 0 or less.
std::string UtcTime(int64_t unix_ms, const char* pattern, const char* none) {
  if (unix_ms <= 0) return none;
  const std::time_t secs = static_cast<std::time_t>(unix_ms / 1000);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[64];
  std::strftime(buf, sizeof(buf), pattern, &tm);
  return buf;
}

}  // namespace

std::string FormatUtc(int64_t unix_ms) { return UtcTime(unix_ms, "%Y-%m-%d %H:%M:%S UTC", "-"); }

std::string FormatIsoUtc(int64_t unix_ms) { return UtcTime(unix_ms, "%Y-%m-%dT%H:%M:%SZ", ""); }

std::string FormatDuration(int64_t duration_ms) {
  const int64_t s = std::max<int64_t>(0, duration_ms / 1000);
  const int64_t d = s / 86400, h = (s % 86400) / 3600, m = (s % 3600) / 60, sec = s % 60;
  if (d > 0) return std::to_string(d) + "d " + std::to_string(h) + "h";
  if (h > 0) return std::to_string(h) + "h " + std::to_string(m) + "m";
  if (m > 0) return std::to_string(m) + "m " + std::to_string(sec) + "s";
  return std::to_string(sec) + "s";
}

std::string FormatGib(int64_t bytes) {
  return FormatFixed(static_cast<double>(bytes) / (1024.0 * 1024.0 * 1024.0), 1) + " GiB";
}

double TflopsOf(const core::ItemRecord& item) {
  if (!item.result || item.result->time.median_ms <= 0) return 0;
  const double flops = item.result->flops > 0 ? item.result->flops : item.item.op.Flops();
  return flops / (item.result->time.median_ms * 1e-3) / 1e12;
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

std::string OpLabel(const core::GemmOp& op) {
  std::string s = std::string(core::ToString(op.pass)) + " " + op.name;
  if (op.name != op.shape.ToString()) s += " " + op.shape.ToString();
  if (op.groups > 1) s += " x" + std::to_string(op.groups) + " groups";
  return s;
}

std::string ItemLabel(const core::ItemRecord& item) {
  return OpLabel(item.item.op) + " " + std::string(core::ToString(item.item.recipe)) + "/" +
         std::string(core::ToString(item.item.mode));
}

std::string_view PassTitle(core::Pass pass) {
  switch (pass) {
    case core::Pass::kFprop:
      return "Fprop";
    case core::Pass::kDgrad:
      return "Dgrad";
    case core::Pass::kWgrad:
      return "Wgrad";
  }
  return "?";
}

}  // namespace gemmprof::client::render
