#include "report/clocks_event_reasons.h"

#include <cstdio>

namespace gemmprof::report {
namespace {

struct Reason {
  uint64_t bit;
  const char* name;
};

// Values and meanings from nvml.h (NvmlClocksEventReasons).
constexpr Reason kReasons[] = {
    {0x1, "gpu idle"},
    {0x2, "applications clocks setting"},
    {0x4, "sw power cap"},
    {0x8, "hw slowdown"},
    {0x10, "sync boost"},
    {0x20, "sw thermal slowdown"},
    {0x40, "hw thermal slowdown"},
    {0x80, "hw power brake slowdown"},
    {0x100, "display clocks setting"},
    {0x200, "board limit"},
    {0x400, "reliability"},
};

constexpr uint64_t kHardwareSlowdown = 0x8 | 0x40 | 0x80;
constexpr uint64_t kSwThermal = 0x20;
constexpr uint64_t kSwPowerCap = 0x4;
constexpr uint64_t kApplicationsClocks = 0x2;

std::string Hex(uint64_t bit) {
  char buf[24];
  std::snprintf(buf, sizeof(buf), "0x%llx", static_cast<unsigned long long>(bit));
  return buf;
}

}  // namespace

std::string ClocksEventReasonNames(uint64_t reasons) {
  reasons &= ~kClocksEventGpuIdle;
  std::string out;
  for (int i = 0; i < 64; ++i) {
    const uint64_t bit = uint64_t{1} << i;
    if ((reasons & bit) == 0) continue;
    std::string name = Hex(bit);
    for (const Reason& r : kReasons)
      if (r.bit == bit) name = r.name;
    out += (out.empty() ? "" : ", ") + name;
  }
  return out;
}

std::string ClocksEventImpact(uint64_t reasons) {
  if (reasons & kHardwareSlowdown)
    return "hardware slowdown cuts clocks by 2x or more; these medians are not representative";
  if (reasons & kSwThermal) return "the GPU ran hot; medians drift as it heats up";
  if (reasons & kSwPowerCap) return "medians on a power-capped GPU drift by a few %";
  if (reasons & kApplicationsClocks) return "clocks are held at the applications-clocks setting";
  return "";
}

}  // namespace gemmprof::report
