#include "kernels/gemm_verifier.h"

#include <cmath>

#include "absl/strings/str_format.h"
#include "kernels/device_kernels.h"
#include "kernels/matmul_plan.h"

namespace gemmprof::kernels {
namespace {

struct RefBuffers {
  float* a = nullptr;
  float* bt = nullptr;
  float* ref = nullptr;
  double* sums = nullptr;
};

absl::StatusOr<RefBuffers> GetBuffers(DevicePool& pool, int64_t m, int64_t n, int64_t k,
                                      int64_t groups) {
  RefBuffers b;
  ASSIGN_OR_RETURN(b.a, pool.GetAs<float>("ref.a", groups * m * k));
  ASSIGN_OR_RETURN(b.bt, pool.GetAs<float>("ref.bt", groups * n * k));
  ASSIGN_OR_RETURN(b.ref, pool.GetAs<float>("ref.c", groups * m * n));
  ASSIGN_OR_RETURN(b.sums, pool.GetAs<double>("ref.sums", 4));
  return b;
}

}  // namespace

absl::StatusOr<VerificationResult> VerifyGemm(cublasLtHandle_t lt, DevicePool& pool,
                                              const OperandQuantizer& a, const OperandQuantizer& bt,
                                              const __nv_bfloat16* out, int64_t m, int64_t n,
                                              int64_t k, int64_t groups, double threshold,
                                              void* workspace, size_t workspace_bytes,
                                              cudaStream_t stream) {
  VerificationResult r;
  absl::StatusOr<RefBuffers> bufs = GetBuffers(pool, m, n, k, groups);
  if (!bufs.ok()) {
    if (!absl::IsResourceExhausted(bufs.status())) return bufs.status();
    // The measurement stands; only the check could not be made.
    (void)cudaGetLastError();
    r.note = absl::StrFormat("not verified: the fp32 reference needs %.1f GiB more",
                             4.0 * groups * (m * k + n * k + m * n) / (1 << 30));
    return r;
  }
  RETURN_IF_ERROR(a.Dequantize(bufs->a, stream));
  RETURN_IF_ERROR(bt.Dequantize(bufs->bt, stream));
  MatmulSpec spec;
  spec.m = m;
  spec.n = n;
  spec.k = k;
  spec.batch = groups;
  spec.a_type = spec.bt_type = spec.c_type = CUDA_R_32F;
  spec.compute = CUBLAS_COMPUTE_32F;
  spec.a = bufs->a;
  spec.bt = bufs->bt;
  spec.c = bufs->ref;
  spec.workspace = workspace;
  spec.workspace_bytes = workspace_bytes;
  ASSIGN_OR_RETURN(MatmulPlan plan, MatmulPlan::Create(lt, spec, 1));
  RETURN_IF_ERROR(plan.Enqueue(stream));
  CUDA_RETURN_IF_ERROR(cudaMemsetAsync(bufs->sums, 0, 4 * sizeof(double), stream));
  CUDA_RETURN_IF_ERROR(ErrorSums(out, bufs->ref, groups * m * n, bufs->sums, stream));
  double sums[3] = {};
  CUDA_RETURN_IF_ERROR(
      cudaMemcpyAsync(sums, bufs->sums, sizeof(sums), cudaMemcpyDeviceToHost, stream));
  CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(stream));
  r.rel_error = sums[1] > 0 ? std::sqrt(sums[0] / sums[1]) : std::sqrt(sums[0]);
  // NaN never passes: compare so that a NaN error lands in `incorrect`.
  const bool ok = sums[2] == 0 && r.rel_error <= threshold;
  r.verdict = ok ? core::Verification::kPassed : core::Verification::kIncorrect;
  if (sums[2] > 0) r.note = absl::StrFormat("%.0f non-finite output values", sums[2]);
  return r;
}

}  // namespace gemmprof::kernels
