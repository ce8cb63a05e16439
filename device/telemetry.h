// Live readings of the daemon's GPUs, which /metrics exports. The NVML implementation
// lives in kernels/ (kernels/timing/nvml_telemetry.h, CUDA builds only); host builds and
// host-backend daemons use NullTelemetry, and /metrics then leaves the device gauges out.
// Header-only: kernels/ implements it and server/metrics/ reads it, neither links the other.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace gemmprof::device {

// One device's state now. A reading NVML could not take is unset (and not exported).
struct DeviceReading {
  int index = 0;  // the daemon's device index (--device of its worker)
  std::string uuid;
  std::string name;
  std::optional<double> sm_clock_hz;
  std::optional<double> power_w;
  std::optional<double> temperature_c;
};

// A GPU the daemon serves, to be read: its index (worker --device), UUID and name.
struct TelemetryDevice {
  int index = 0;
  std::string uuid;
  std::string name;
};

// Thread-safe: /metrics scrapes may call Read from several HTTP threads at once.
class DeviceTelemetry {
 public:
  virtual ~DeviceTelemetry() = default;
  // One reading per device it knows; devices it cannot read are left out.
  virtual std::vector<DeviceReading> Read() = 0;
};

// No devices to read: host builds and the host backend.
class NullTelemetry final : public DeviceTelemetry {
 public:
  std::vector<DeviceReading> Read() override { return {}; }
};

}  // namespace gemmprof::device
