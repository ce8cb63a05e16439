#include "kernels/cuda/cuda_check.h"

#include "absl/strings/str_cat.h"
#include "core/error_detail.h"

namespace gemmprof::kernels {
namespace {

// "kernels/runner/cuda_runner.cc:114: cudaMemGetInfo(&free, &total)", the path from the
// repository root where the build path ends in one.
std::string Where(std::string_view call, const char* file, int line) {
  std::string_view path(file);
  if (const size_t at = path.rfind("kernels/"); at != std::string_view::npos) {
    path = path.substr(at);
  }
  return absl::StrCat(std::string(path), ":", line, ": ", std::string(call));
}

}  // namespace

bool IsStickyCudaError(cudaError_t err) {
  switch (err) {
    case cudaErrorIllegalAddress:
    case cudaErrorLaunchTimeout:
    case cudaErrorAssert:
    case cudaErrorHardwareStackError:
    case cudaErrorIllegalInstruction:
    case cudaErrorMisalignedAddress:
    case cudaErrorInvalidAddressSpace:
    case cudaErrorInvalidPc:
    case cudaErrorLaunchFailure:
    case cudaErrorECCUncorrectable:
    case cudaErrorNvlinkUncorrectable:
    case cudaErrorContextIsDestroyed:
      return true;
    default:
      return false;
  }
}

absl::Status CudaStatus(cudaError_t err, std::string_view call, const char* file, int line) {
  if (err == cudaSuccess) return absl::OkStatus();
  absl::Status s =
      err == cudaErrorMemoryAllocation
          ? absl::ResourceExhaustedError("CUDA out of memory (cudaErrorMemoryAllocation)")
          : absl::InternalError(absl::StrCat("CUDA error ", static_cast<int>(err), " (",
                                             cudaGetErrorName(err), ": ", cudaGetErrorString(err),
                                             ")"));
  s = core::WithSource(std::move(s), Where(call, file, line));
  return IsStickyCudaError(err) ? core::MarkContextLost(std::move(s)) : s;
}

absl::Status CublasStatus(cublasStatus_t st, std::string_view call, const char* file, int line) {
  if (st == CUBLAS_STATUS_SUCCESS) return absl::OkStatus();
  const std::string name = cublasLtGetStatusName(st);
  absl::Status s;
  if (st == CUBLAS_STATUS_NOT_SUPPORTED) {
    s = absl::FailedPreconditionError(
        absl::StrCat("cuBLASLt does not support this configuration (", name, ")"));
  } else if (st == CUBLAS_STATUS_ALLOC_FAILED) {
    s = absl::ResourceExhaustedError(absl::StrCat("cuBLASLt out of memory (", name, ")"));
  } else {
    s = absl::InternalError(
        absl::StrCat("cuBLASLt error ", name, " (", cublasLtGetStatusString(st), ")"));
  }
  return core::WithSource(std::move(s), Where(call, file, line));
}

absl::Status NvmlStatus(int nvml_ret, const char* name, std::string_view call, const char* file,
                        int line) {
  if (nvml_ret == 0) return absl::OkStatus();
  return core::WithSource(
      absl::UnavailableError(absl::StrCat("NVML error ", nvml_ret, " (", name ? name : "?", ")")),
      Where(call, file, line));
}

}  // namespace gemmprof::kernels
