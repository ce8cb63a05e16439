// NVML, loaded at run time from the driver's libnvidia-ml.so.1. The CPU build machines
// have neither nvml.h nor the NVML stub library, and a node without NVML must still
// measure (telemetry then reads as unavailable), so the few entry points used are
// declared here and resolved with dlopen. The NVML C ABI is stable across drivers.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "core/status.h"

namespace gemmprof::kernels {

// One reading of the device's state.
struct NvmlSample {
  double sm_clock_mhz = 0, mem_clock_mhz = 0, power_w = 0, temp_c = 0;
  uint64_t clocks_event_reasons = 0;  // nvmlClocksEventReason* bits
};

// Clock-event reasons that mean the clocks were held down (power cap, thermal,
// hardware slowdown, power brake), as opposed to idle or an application setting.
inline constexpr uint64_t kThrottleReasonMask = 0x4 | 0x8 | 0x20 | 0x40 | 0x80;

// A loaded NVML bound to one device. Thread-compatible: Sample() may run on a sampling
// thread while the owner waits.
class NvmlDevice {
 public:
  // Loads NVML and finds the device whose UUID is `uuid` ("GPU-xxxxxxxx-..."). Unavailable
  // when the library or the device is missing.
  static absl::StatusOr<std::unique_ptr<NvmlDevice>> Open(const std::string& uuid);
  ~NvmlDevice();
  NvmlDevice(const NvmlDevice&) = delete;
  NvmlDevice& operator=(const NvmlDevice&) = delete;

  absl::StatusOr<NvmlSample> Sample() const;
  // Board power now (nvmlDeviceGetPowerUsage; on recent boards an average NVML keeps).
  absl::StatusOr<double> PowerW() const;
  // The board's energy counter in millijoules since the driver loaded
  // (nvmlDeviceGetTotalEnergyConsumption); Unimplemented naming why where the board or
  // the driver has none.
  absl::StatusOr<uint64_t> TotalEnergyMj() const;
  // The driver version string, e.g. "580.159.04".
  absl::StatusOr<std::string> DriverVersion() const;

 private:
  struct Api;
  NvmlDevice() = default;
  void* lib_ = nullptr;
  std::unique_ptr<Api> api_;
  void* device_ = nullptr;
};

}  // namespace gemmprof::kernels
