#include "kernels/runner/cuda_runner_factory.h"

#include <cuda_runtime_api.h>

#include "absl/strings/str_cat.h"
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/device_kernels.h"
#include "kernels/runner/cuda_runner.h"
#include "kernels/timing/nvml_telemetry.h"

namespace gemmprof::kernels {

int CudaDeviceCount() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    (void)cudaGetLastError();  // clear the sticky-free error so later calls start clean
    return 0;
  }
  return count;
}

absl::StatusOr<std::unique_ptr<device::Runner>> MakeCudaRunner(int device_ordinal) {
  const int count = CudaDeviceCount();
  if (count == 0) return absl::UnavailableError("no CUDA device (no driver or no GPU)");
  if (device_ordinal < 0 || device_ordinal >= count) {
    return absl::InvalidArgumentError(absl::StrCat("device ordinal ", device_ordinal,
                                                   " out of range; this node has ", count,
                                                   " CUDA device(s)"));
  }
  ASSIGN_OR_RETURN(std::unique_ptr<CudaRunner> runner, CudaRunner::Create(device_ordinal));
  return std::unique_ptr<device::Runner>(std::move(runner));
}

absl::Status InjectIllegalAddress(int device_ordinal) {
  CUDA_RETURN_IF_ERROR(cudaSetDevice(device_ordinal));
  CUDA_RETURN_IF_ERROR(WriteThroughBadPointer(nullptr));
  CUDA_RETURN_IF_ERROR(cudaDeviceSynchronize());
  return absl::InternalError("a write through a bad pointer did not fault");
}

absl::Status InjectHang(int device_ordinal) {
  CUDA_RETURN_IF_ERROR(cudaSetDevice(device_ordinal));
  int* forever = nullptr;
  CUDA_RETURN_IF_ERROR(cudaMalloc(reinterpret_cast<void**>(&forever), sizeof(int)));
  const int one = 1;
  CUDA_RETURN_IF_ERROR(cudaMemcpy(forever, &one, sizeof(int), cudaMemcpyHostToDevice));
  CUDA_RETURN_IF_ERROR(LaunchNeverEndingKernel(forever, nullptr));
  CUDA_RETURN_IF_ERROR(cudaDeviceSynchronize());
  return absl::InternalError("a kernel that never ends ended");
}

device::CudaBackend CudaEntryPoints() {
  device::CudaBackend cuda;
  cuda.device_count = &CudaDeviceCount;
  cuda.make_runner = &MakeCudaRunner;
  cuda.inject_illegal_address = &InjectIllegalAddress;
  cuda.inject_hang = &InjectHang;
  cuda.make_telemetry = &MakeNvmlTelemetry;
  return cuda;
}

}  // namespace gemmprof::kernels
