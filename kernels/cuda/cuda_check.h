// One checking macro family for every CUDA runtime, cuBLASLt and NVML call: a failure
// becomes an absl::Status whose message says what failed in words a user can act on
// ("CUDA out of memory (cudaErrorMemoryAllocation)", "CUDA error 700
// (cudaErrorIllegalAddress: ...)"), with the file, line and call text attached as the
// source payload for the daemon's log (core/error_detail.h), never in the message.
// Sticky errors (the context is dead) are marked context-lost.
#pragma once

#include <cublasLt.h>
#include <cuda_runtime_api.h>

#include <string_view>

#include "core/status.h"

namespace gemmprof::kernels {

// True for errors after which the CUDA context is unusable (illegal address, launch
// failure, uncorrectable ECC, ...): every later call fails, only a new process recovers.
bool IsStickyCudaError(cudaError_t err);

// Status for a failed CUDA runtime call (OK for cudaSuccess). cudaErrorMemoryAllocation
// maps to ResourceExhausted, everything else to Internal; sticky errors are marked
// context-lost.
absl::Status CudaStatus(cudaError_t err, std::string_view call, const char* file, int line);
// Status for a failed cuBLASLt call (OK for CUBLAS_STATUS_SUCCESS). NOT_SUPPORTED maps
// to FailedPrecondition, ALLOC_FAILED to ResourceExhausted, others to Internal.
absl::Status CublasStatus(cublasStatus_t st, std::string_view call, const char* file, int line);
// Status for a failed NVML call; `nvml_ret` is an nvmlReturn_t, `name` its error string.
absl::Status NvmlStatus(int nvml_ret, const char* name, std::string_view call, const char* file,
                        int line);

}  // namespace gemmprof::kernels

// Returns from the enclosing function with a Status when the CUDA runtime call fails.
#define CUDA_RETURN_IF_ERROR(call) \
  RETURN_IF_ERROR(::gemmprof::kernels::CudaStatus((call), #call, __FILE__, __LINE__))
// Returns from the enclosing function with a Status when the cuBLASLt call fails.
#define CUBLAS_RETURN_IF_ERROR(call) \
  RETURN_IF_ERROR(::gemmprof::kernels::CublasStatus((call), #call, __FILE__, __LINE__))
// The Status of a CUDA runtime call, for places that collect rather than return.
#define CUDA_STATUS(call) ::gemmprof::kernels::CudaStatus((call), #call, __FILE__, __LINE__)
// Checks the last kernel launch (launch configuration errors are only reported there).
#define CUDA_RETURN_IF_LAUNCH_ERROR() CUDA_RETURN_IF_ERROR(cudaGetLastError())
