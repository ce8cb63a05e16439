// device::Runner on one NVIDIA GPU through cuBLASLt and the project's quantization
// kernels. See DESIGN.md "Measurement" for what a number means; in short: random-normal
// BF16 inputs from the job's seed, quantization per recipe/mode/accounting, one
// iteration captured in a CUDA graph and timed per sample with events behind a blocking
// kernel, NVML telemetry, and a device-side fp32 reference check of every output.
#pragma once

#include <memory>
#include <string>

#include "kernels/cublaslt_handles.h"
#include "kernels/cuda_handles.h"
#include "kernels/device_pool.h"
#include "kernels/iteration_timer.h"
#include "kernels/nvml_library.h"
#include "server/device/runner.h"

namespace gemmprof::kernels {

class CudaRunner : public device::Runner {
 public:
  // Binds to `device_ordinal`: reads its properties, creates the stream, cuBLASLt handle
  // and workspace, and opens NVML (optional: without it telemetry stays zero, noted).
  static absl::StatusOr<std::unique_ptr<CudaRunner>> Create(int device_ordinal);

  const core::DeviceInfo& Info() const override { return info_; }
  core::RecipeSupport Supports(core::Recipe recipe) const override;
  absl::Status CanImplement(const core::WorkItem& item,
                            const core::TimingOptions& timing) const override;
  absl::Status BeginJob(const core::TimingOptions& timing) override;
  absl::StatusOr<core::Measurement> Run(const core::WorkItem& item,
                                        const core::TimingOptions& timing) override;

 private:
  CudaRunner() = default;
  absl::Status InitDeviceInfo();
  absl::Status WarmUp(const core::TimingOptions& timing);
  absl::Status CheckMemory(const core::WorkItem& item, const core::TimingOptions& timing) const;
  absl::StatusOr<core::Measurement> Measure(const core::WorkItem& item,
                                            const core::TimingOptions& timing);

  int ordinal_ = 0;
  int sm_ = 0;
  int64_t l2_bytes_ = 0;
  core::DeviceInfo info_;
  CudaStream stream_;
  LtHandle lt_;
  DeviceBuffer workspace_;
  DevicePool pool_;
  std::unique_ptr<IterationTimer> timer_;
  std::unique_ptr<NvmlDevice> nvml_;
  std::string nvml_note_;  // why telemetry is unavailable, if it is
};

}  // namespace gemmprof::kernels
