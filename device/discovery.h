// Which devices gemmprofd drives, and how: the backend (every visible GPU through the
// CUDA runner, or the host reference runner), one worker process per device, the runner
// each worker hosts, and the telemetry /metrics reads. The CUDA side comes in as a
// CudaBackend (device/cuda_backend.h), empty in a build without CUDA.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/status.h"
#include "device/cuda_backend.h"
#include "device/telemetry.h"
#include "device/worker/remote_runner.h"
#include "device/worker/worker_main.h"

namespace gemmprof::device {

// What gemmprofd was asked for.
struct DiscoveryOptions {
  std::string backend = "auto";          // --backend: auto, cuda or host
  int host_devices = 1;                  // --host-devices: emulated devices of the host backend
  double item_timeout_s = 0;             // --item-timeout: each worker's deadline (0: per item)
  std::vector<std::string> worker_args;  // flags every worker gets (log level and file)
};

// The backend the workers run ("cuda" or "host") and how many devices it has: every
// visible GPU under cuda (auto takes cuda when there is one, and warns when it falls back
// to host), --host-devices under host. FailedPrecondition for --backend cuda without a
// GPU or without CUDA in this build; InvalidArgument for --host-devices with cuda.
absl::Status ResolveBackend(const DiscoveryOptions& options, const CudaBackend& cuda,
                            std::string* backend, int* devices);

// One RemoteRunner per device, their worker processes started side by side. A device
// whose worker cannot start is unavailable (its Availability says why), not an error.
// Errors: ResolveBackend's, and InvalidArgument for a bad GEMMPROF_WORKER_FAULT.
absl::StatusOr<std::vector<std::unique_ptr<worker::RemoteRunner>>> StartWorkers(
    const DiscoveryOptions& options, const CudaBackend& cuda);

// What a worker process of `backend` ("cuda" or "host") hosts for device `ordinal`: the
// runner it creates and, under cuda, the illegal-address fault. Another backend makes a
// runner that fails with InvalidArgument.
// `host_model`: the host runner's device name (--host-model), empty for its own.
worker::WorkerHooks WorkerHooksFor(const std::string& backend, int ordinal, const CudaBackend& cuda,
                                   const std::string& host_model = "");

// SM clock, power and temperature of the CUDA devices among `runners` for /metrics
// (NVML); NullTelemetry when there are none or the build has no CUDA. A device NVML
// cannot open is left out, with a warning in the log.
std::unique_ptr<DeviceTelemetry> MakeTelemetry(
    const std::vector<std::unique_ptr<worker::RemoteRunner>>& runners, const CudaBackend& cuda);

}  // namespace gemmprof::device
