// The CUDA runner's entry points, as the device layer sees them. kernels/ fills them in
// CUDA builds (kernels/runner/cuda_runner_factory.h, CudaEntryPoints); in a build without
// CUDA every member is empty. Through this struct device/ drives GPUs without including
// anything of kernels/.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/status.h"
#include "device/runner.h"
#include "device/telemetry.h"

namespace gemmprof::device {

struct CudaBackend {
  // Visible GPUs; 0 without a driver or GPU. Never fails.
  std::function<int()> device_count;
  // A runner bound to GPU `ordinal` (InvalidArgument out of range, Unavailable when CUDA
  // cannot start).
  std::function<absl::StatusOr<std::unique_ptr<Runner>>(int ordinal)> make_runner;
  // The worker fault test hook: a CUDA illegal-address error on GPU `ordinal`, which
  // leaves the process's context dead (a worker process only).
  std::function<absl::Status(int ordinal)> inject_illegal_address;
  // The hang fault's hook: a kernel that never ends on GPU `ordinal`, waited for.
  std::function<absl::Status(int ordinal)> inject_hang;
  // NVML gauges for `devices`; a device NVML cannot open is left out with one line in
  // `problems`.
  std::function<std::unique_ptr<DeviceTelemetry>(std::vector<TelemetryDevice> devices,
                                                 std::vector<std::string>* problems)>
      make_telemetry;

  // Whether this build has the CUDA runner.
  bool built() const { return static_cast<bool>(device_count); }
};

}  // namespace gemmprof::device
