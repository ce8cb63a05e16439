#include "kernels/runner/gemm_verifier.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "kernels/cublaslt/matmul_plan.h"
#include "kernels/cuda/device_kernels.h"

namespace gemmprof::kernels {
namespace {

struct RefBuffers {
  float* a = nullptr;
  float* bt = nullptr;
  float* ref = nullptr;
  double* sums = nullptr;
};

constexpr const char* kRefSlots[] = {"ref.a", "ref.bt", "ref.c", "ref.sums"};

absl::StatusOr<RefBuffers> GetBuffers(DevicePool& pool, int64_t m, int64_t n, int64_t k,
                                      int64_t groups) {
  RefBuffers b;
  ASSIGN_OR_RETURN(b.a, pool.GetAs<float>("ref.a", groups * m * k));
  ASSIGN_OR_RETURN(b.bt, pool.GetAs<float>("ref.bt", groups * n * k));
  ASSIGN_OR_RETURN(b.ref, pool.GetAs<float>("ref.c", groups * m * n));
  ASSIGN_OR_RETURN(b.sums, pool.GetAs<double>("ref.sums", 4 * groups));
  return b;
}

}  // namespace

absl::StatusOr<VerificationResult> VerifyGemm(cublasLtHandle_t lt, DevicePool& pool,
                                              const OperandQuantizer& a, const OperandQuantizer& bt,
                                              const __nv_bfloat16* out, int64_t m, int64_t n,
                                              int64_t k, int64_t groups, double threshold,
                                              void* workspace, size_t workspace_bytes,
                                              cudaStream_t stream, int64_t max_chunk_groups) {
  VerificationResult r;
  // The reference of as many groups at a time as the device holds: all of them, else half
  // as many each time the buffers cannot be had, down to one group.
  int64_t chunk = max_chunk_groups > 0 ? std::min(groups, max_chunk_groups) : groups;
  absl::StatusOr<RefBuffers> bufs = GetBuffers(pool, m, n, k, chunk);
  while (absl::IsResourceExhausted(bufs.status())) {
    // The reference slots may have grown piecewise for other shapes (one member's A, the
    // next one's B^T), and other batches' buffers may still be held: free both, and ask
    // again for exactly this chunk's reference.
    (void)cudaGetLastError();
    for (const char* slot : kRefSlots) pool.Release(slot);
    pool.ReleaseUnused();
    bufs = GetBuffers(pool, m, n, k, chunk);
    if (!absl::IsResourceExhausted(bufs.status()) || chunk == 1) break;
    chunk = (chunk + 1) / 2;
  }
  if (!bufs.ok()) {
    if (!absl::IsResourceExhausted(bufs.status())) return bufs.status();
    // The measurement stands; only the check could not be made.
    (void)cudaGetLastError();
    r.note = absl::StrFormat(
        "not verified: the fp32 reference of even one group (%.1f GiB) does not fit the device",
        4.0 * (m * k + n * k + m * n) / (1 << 30));
    return r;
  }
  // Each group's error sums: the buffer of the first chunk holds 4 * chunk doubles, so the
  // sums of all groups are gathered on the host chunk by chunk.
  std::vector<double> sums(4 * groups);
  for (int64_t first = 0; first < groups; first += chunk) {
    const int64_t count = std::min(chunk, groups - first);
    RETURN_IF_ERROR(a.DequantizeGroups(first, count, bufs->a, stream));
    RETURN_IF_ERROR(bt.DequantizeGroups(first, count, bufs->bt, stream));
    MatmulSpec spec;
    spec.m = m;
    spec.n = n;
    spec.k = k;
    spec.batch = count;
    spec.a_type = spec.bt_type = spec.c_type = CUDA_R_32F;
    spec.compute = CUBLAS_COMPUTE_32F;
    spec.a = bufs->a;
    spec.bt = bufs->bt;
    spec.c = bufs->ref;
    spec.workspace = workspace;
    spec.workspace_bytes = workspace_bytes;
    ASSIGN_OR_RETURN(MatmulPlan plan, MatmulPlan::Create(lt, spec, 1));
    RETURN_IF_ERROR(plan.Enqueue(stream));
    // Each group is judged on its own: one wrong expert among 128 barely moves an error
    // taken over all of them.
    CUDA_RETURN_IF_ERROR(cudaMemsetAsync(bufs->sums, 0, 4 * count * sizeof(double), stream));
    for (int64_t g = 0; g < count; ++g) {
      CUDA_RETURN_IF_ERROR(ErrorSums(out + (first + g) * m * n, bufs->ref + g * m * n, m * n,
                                     bufs->sums + 4 * g, stream));
    }
    CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(sums.data() + 4 * first, bufs->sums,
                                         4 * count * sizeof(double), cudaMemcpyDeviceToHost,
                                         stream));
    // The next chunk overwrites the reference and the sums.
    CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(stream));
  }
  double non_finite = 0;
  int64_t worst = 0, wrong = 0;
  for (int64_t g = 0; g < groups; ++g) {
    const double* gs = &sums[4 * g];
    const double e = gs[1] > 0 ? std::sqrt(gs[0] / gs[1]) : std::sqrt(gs[0]);
    non_finite += gs[2];
    // NaN never passes: compare so that a NaN error counts as wrong.
    if (gs[2] > 0 || !(e <= threshold)) ++wrong;
    if (g == 0 || !(e <= r.rel_error)) {
      r.rel_error = e;
      worst = g;
    }
  }
  r.verdict = wrong == 0 ? core::Verification::kPassed : core::Verification::kIncorrect;
  std::vector<std::string> notes;
  if (non_finite > 0) notes.push_back(absl::StrFormat("%.0f non-finite output values", non_finite));
  if (groups > 1 && wrong > 0) {
    notes.push_back(
        absl::StrFormat("%d of %d groups wrong (worst: group %d)", wrong, groups, worst));
  }
  if (chunk < groups) {
    notes.push_back(absl::StrFormat("fp32 reference computed %d group%s at a time", chunk,
                                    chunk == 1 ? "" : "s"));
  }
  r.note = absl::StrJoin(notes, "; ");
  return r;
}

}  // namespace gemmprof::kernels
