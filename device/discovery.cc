#include "device/discovery.h"

#include <spdlog/spdlog.h>

#include <cstdlib>
#include <thread>
#include <utility>

#include "device/host/host_runner.h"
#include "device/worker/fault.h"
#include "device/worker/worker_process.h"

namespace gemmprof::device {

absl::Status ResolveBackend(const DiscoveryOptions& o, const CudaBackend& cuda,
                            std::string* backend, int* devices) {
  *backend = "host";
  *devices = o.host_devices;
  if (!cuda.built()) {
    if (o.backend == "cuda") {
      return absl::FailedPreconditionError(
          "--backend cuda: this gemmprofd was built without CUDA (GEMMPROF_ENABLE_CUDA=OFF)");
    }
  } else {
    const int gpus = cuda.device_count();
    if (o.backend == "cuda" || (o.backend == "auto" && gpus > 0)) {
      if (gpus == 0) return absl::FailedPreconditionError("--backend cuda: no CUDA device found");
      if (o.host_devices != 1) {
        return absl::InvalidArgumentError(
            "--host-devices: only for the host backend; the cuda backend runs every visible GPU");
      }
      *backend = "cuda";
      *devices = gpus;
      return absl::OkStatus();
    }
  }
  if (o.backend == "auto") {
    spdlog::warn(
        "no GPU available: using the host reference runner (CPU emulation); "
        "results are labeled host-reference");
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<std::unique_ptr<worker::RemoteRunner>>> StartWorkers(
    const DiscoveryOptions& o, const CudaBackend& cuda) {
  worker::WorkerOptions base;
  int devices = 0;
  RETURN_IF_ERROR(ResolveBackend(o, cuda, &base.backend, &devices));
  const char* fault = std::getenv(worker::kFaultEnvVar);
  if (fault != nullptr && *fault != '\0') {
    RETURN_IF_ERROR(worker::ParseWorkerFaults(fault).status());
    spdlog::warn("{}={} is set: workers inject these faults (a test hook)", worker::kFaultEnvVar,
                 fault);
  }
  base.env = worker::EnvironmentWith(worker::kFaultEnvVar, fault != nullptr ? fault : "");
  base.item_timeout_s = o.item_timeout_s;
  base.extra_args = o.worker_args;
  std::vector<std::unique_ptr<worker::RemoteRunner>> runners;
  for (int i = 0; i < devices; ++i) {
    worker::WorkerOptions options = base;
    options.device = i;
    runners.push_back(std::make_unique<worker::RemoteRunner>(std::move(options)));
  }
  std::vector<std::thread> starts;
  for (auto& r : runners) starts.emplace_back([&r] { r->Start(); });
  for (auto& t : starts) t.join();
  return runners;
}

worker::WorkerHooks WorkerHooksFor(const std::string& backend, int ordinal, const CudaBackend& cuda,
                                   const std::string& host_model) {
  worker::WorkerHooks hooks;
  hooks.make_runner = [backend, ordinal, cuda,
                       host_model]() -> absl::StatusOr<std::unique_ptr<Runner>> {
    if (backend == "cuda" && cuda.built()) return cuda.make_runner(ordinal);
    if (backend == "host") return std::make_unique<HostRunner>(2, ordinal, host_model);
    return absl::InvalidArgumentError("--backend " + backend + ": a worker takes cuda or host");
  };
  if (backend == "cuda" && cuda.built()) {
    hooks.illegal_address = [ordinal, cuda] { return cuda.inject_illegal_address(ordinal); };
    if (cuda.inject_hang) hooks.hang = [ordinal, cuda] { return cuda.inject_hang(ordinal); };
  }
  return hooks;
}

std::unique_ptr<DeviceTelemetry> MakeTelemetry(
    const std::vector<std::unique_ptr<worker::RemoteRunner>>& runners, const CudaBackend& cuda) {
  std::vector<TelemetryDevice> devices;
  for (size_t i = 0; i < runners.size(); ++i) {
    const core::DeviceInfo& info = runners[i]->Info();
    if (info.backend == "cuda" && !info.uuid.empty()) {
      devices.push_back({static_cast<int>(i), info.uuid, info.name});
    }
  }
  if (devices.empty() || !cuda.built()) return std::make_unique<NullTelemetry>();
  std::vector<std::string> problems;
  auto telemetry = cuda.make_telemetry(std::move(devices), &problems);
  for (const std::string& p : problems) spdlog::warn("metrics: no NVML gauges for {}", p);
  return telemetry;
}

}  // namespace gemmprof::device
