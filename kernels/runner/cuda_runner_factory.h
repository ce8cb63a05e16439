// Entry points to the CUDA runner for code that must not include CUDA headers: the
// daemon hands CudaEntryPoints to the device layer (device/discovery.h); the GPU tests
// and benchmarks call the others. All are safe on machines without a driver or GPU.
#pragma once

#include <memory>

#include "core/status.h"
#include "device/cuda_backend.h"
#include "device/runner.h"

namespace gemmprof::kernels {

// Number of CUDA devices; 0 when there is no driver, no GPU or any CUDA error. Never
// crashes and never throws.
int CudaDeviceCount();

// A runner bound to `device_ordinal`. InvalidArgument for an ordinal out of range,
// Unavailable when CUDA cannot be initialized, Internal for other CUDA/cuBLASLt errors.
absl::StatusOr<std::unique_ptr<device::Runner>> MakeCudaRunner(int device_ordinal);

// Test hook (GEMMPROF_WORKER_FAULT=illegal-address@SEQ): runs a kernel that writes through
// a bad pointer on `device_ordinal` and returns the resulting CUDA error (700,
// cudaErrorIllegalAddress), marked context-lost. The process's CUDA context is dead
// afterwards: only a worker process may call this.
absl::Status InjectIllegalAddress(int device_ordinal);

// Test hook (GEMMPROF_WORKER_FAULT=hang@SEQ on the cuda backend): launches a kernel that
// never ends on `device_ordinal` and waits for it: returns only if the wait fails. Only
// a worker process may call this; the daemon's watchdog kills it.
absl::Status InjectHang(int device_ordinal);

// The three above and NVML telemetry (timing/nvml_telemetry.h), for the device layer's
// discovery (device/discovery.h).
device::CudaBackend CudaEntryPoints();

}  // namespace gemmprof::kernels
