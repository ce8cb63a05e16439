// Checks a measured GEMM's BF16 output against an fp32 reference computed on the device:
// both operands are dequantized from exactly what the GEMM read (the kernels' row-major
// scales, so a wrong cuBLASLt scale layout shows up), multiplied by cuBLASLt in fp32,
// and ||out - ref||_F / ||ref||_F is reduced on the device.
#pragma once

#include <cublasLt.h>
#include <cuda_bf16.h>

#include "core/result.h"
#include "kernels/cuda/device_pool.h"
#include "kernels/quant/operand_quantizer.h"

namespace gemmprof::kernels {

struct VerificationResult {
  core::Verification verdict = core::Verification::kNotVerified;
  double rel_error = 0;
  std::string note;  // why not verified, or what was wrong
};

// `out` is C, groups x [m, n] BF16 (group after group, as a and bt hold their groups).
// The reference is batched the same way; each group is checked on its own (a group
// fails with a non-finite value or an error above `threshold`, and any failed group
// makes the GEMM incorrect); rel_error is the worst group's.
// Buffers for the reference come from `pool`, for as many groups at a time as the device
// holds (at most `max_chunk_groups` when > 0): all of them, else half as many each time
// the buffers cannot be had (the note says how many); when even one group's cannot be
// had the result is not_verified with the reason (never an error).
absl::StatusOr<VerificationResult> VerifyGemm(cublasLtHandle_t lt, DevicePool& pool,
                                              const OperandQuantizer& a, const OperandQuantizer& bt,
                                              const __nv_bfloat16* out, int64_t m, int64_t n,
                                              int64_t k, int64_t groups, double threshold,
                                              void* workspace, size_t workspace_bytes,
                                              cudaStream_t stream, int64_t max_chunk_groups = 0);

}  // namespace gemmprof::kernels
