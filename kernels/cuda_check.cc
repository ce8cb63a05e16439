#include "kernels/cuda_check.h"

#include "absl/strings/str_cat.h"

namespace gemmprof::kernels {
namespace {

std::string Where(std::string_view call, const char* file, int line) {
  return absl::StrCat(file, ":", line, ": ", std::string(call));
}

}  // namespace

absl::Status CudaStatus(cudaError_t err, std::string_view call, const char* file, int line) {
  if (err == cudaSuccess) return absl::OkStatus();
  std::string msg = absl::StrCat(Where(call, file, line), " failed: ", cudaGetErrorName(err), " (",
                                 cudaGetErrorString(err), ")");
  if (err == cudaErrorMemoryAllocation) return absl::ResourceExhaustedError(msg);
  return absl::InternalError(msg);
}

absl::Status CublasStatus(cublasStatus_t st, std::string_view call, const char* file, int line) {
  if (st == CUBLAS_STATUS_SUCCESS) return absl::OkStatus();
  std::string msg = absl::StrCat(Where(call, file, line), " failed: ", cublasLtGetStatusName(st),
                                 " (", cublasLtGetStatusString(st), ")");
  if (st == CUBLAS_STATUS_NOT_SUPPORTED) return absl::FailedPreconditionError(msg);
  if (st == CUBLAS_STATUS_ALLOC_FAILED) return absl::ResourceExhaustedError(msg);
  return absl::InternalError(msg);
}

absl::Status NvmlStatus(int nvml_ret, const char* name, std::string_view call, const char* file,
                        int line) {
  if (nvml_ret == 0) return absl::OkStatus();
  return absl::UnavailableError(absl::StrCat(Where(call, file, line), " failed: NVML error ",
                                             nvml_ret, " (", name ? name : "?", ")"));
}

}  // namespace gemmprof::kernels
