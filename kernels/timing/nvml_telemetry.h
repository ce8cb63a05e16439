// device::DeviceTelemetry over NVML (kernels/timing/nvml_library.h): SM clock, power and
// temperature of the daemon's GPUs for /metrics. Free of CUDA headers.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "device/telemetry.h"

namespace gemmprof::kernels {

using device::TelemetryDevice;

// Opens NVML for each device by UUID. A device NVML cannot open is left out of every
// reading, with one line in `problems` (may be null) saying why; with none left, Read
// returns nothing.
std::unique_ptr<device::DeviceTelemetry> MakeNvmlTelemetry(std::vector<TelemetryDevice> devices,
                                                           std::vector<std::string>* problems);

}  // namespace gemmprof::kernels
