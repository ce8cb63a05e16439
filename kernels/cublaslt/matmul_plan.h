// One cuBLASLt matmul, fully described and ready to enqueue: descriptors, layouts, the
// heuristic candidates and the chosen algorithm. Orientation (row-major view):
//   C[m, n] = A[m, k] * B[k, n], with A stored [m, k] and B^T stored [n, k] (both K-major,
//   the TN layout FP8 needs on Hopper). In cuBLASLt's column-major terms B^T is operand
//   "A" (transposed) and A is operand "B", so D = C^T column-major = C row-major.
// A grouped GEMM (MoE experts, core::GemmOp::groups) is `batch` such products in one
// strided-batched call: group g's A, B^T and C start g * m*k, g * n*k and g * m*n
// elements after the first (operands stored group after group). Block scales are one
// tensor per group, back to back, each the size cuBLASLt reads for one matrix; the scale
// pointer is group 0's (cuBLASLt has no batch-stride attribute for them; cuBLASLt 13.1
// on Hopper answers a batch with block scales with no algorithm at all, and the runner
// then plans one call per group instead).
#pragma once

#include <cublasLt.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "kernels/cublaslt/cublaslt_handles.h"

namespace gemmprof::kernels {

// Everything a matmul needs. Pointers are device pointers owned by the caller and must
// stay valid (and at the same address) while the plan is used or captured in a graph.
struct MatmulSpec {
  int64_t m = 0, n = 0, k = 0;
  int64_t batch = 1;  // groups, >= 1; > 1 sets BATCH_COUNT and STRIDED_BATCH_OFFSET
  cudaDataType_t a_type = CUDA_R_16BF;   // A [m, k]
  cudaDataType_t bt_type = CUDA_R_16BF;  // B^T [n, k]
  cudaDataType_t c_type = CUDA_R_16BF;   // C [m, n]
  cublasComputeType_t compute = CUBLAS_COMPUTE_32F;
  const void* a = nullptr;
  const void* bt = nullptr;
  void* c = nullptr;
  // Scale modes and pointers (std::nullopt: unscaled operand). A per-tensor scale covers
  // every group of a batch; block scales point at group 0's tensor (see above).
  std::optional<cublasLtMatmulMatrixScale_t> a_scale_mode, bt_scale_mode;
  const void* a_scale = nullptr;
  const void* bt_scale = nullptr;
  std::optional<bool> fast_accum;  // set CUBLASLT_MATMUL_DESC_FAST_ACCUM when present
  // alpha and beta in device memory (NVFP4's tensor scales); both or neither. Otherwise
  // alpha = 1 and beta = 0 on the host.
  const float* device_alpha = nullptr;
  const float* device_beta = nullptr;
  void* workspace = nullptr;
  size_t workspace_bytes = 0;
};

class MatmulPlan {
 public:
  // Builds the descriptors and asks the heuristic for up to `max_candidates` algorithms.
  // FailedPrecondition when cuBLASLt offers none (the message names the shape, batch,
  // types and scale modes); InvalidArgument for a batch < 1 or above INT32_MAX.
  static absl::StatusOr<MatmulPlan> Create(cublasLtHandle_t lt, const MatmulSpec& spec,
                                           int max_candidates);

  // Asks the heuristic once more, as if the workspace held only `limit_bytes`, and adds
  // its first answer as a candidate when it is none of the candidates already here (a
  // smaller workspace rules out split-K reductions the full one allows, and the
  // heuristic's answer for it can be the faster kernel). Returns whether one was added;
  // false as well when limit_bytes is not below the plan's workspace or the heuristic
  // has no answer for it.
  absl::StatusOr<bool> AddWorkspaceLimitedCandidate(size_t limit_bytes);

  // Enqueues the matmul with the chosen algorithm (graph-capturable).
  absl::Status Enqueue(cudaStream_t stream) const;
  // Makes heuristic candidate `index` (0 = cuBLASLt's first choice) the one Enqueue
  // launches; `autotuned` is recorded in the description. OutOfRange for a bad index.
  absl::Status Choose(int index, bool autotuned);
  // "algo=6 tile=... stages=... splitK=1 ... (candidate 2 of 8, autotuned)"; a
  // workspace-limited candidate says so ("..., the heuristic's answer for a 1 MiB
  // workspace, autotuned").
  std::string AlgorithmDescription() const;
  int candidates() const { return static_cast<int>(heuristics_.size()); }
  int chosen() const { return chosen_; }
  const MatmulSpec& spec() const { return spec_; }
  bool chose_workspace_limited() const { return chosen_ >= 0 && chosen_ == limited_index_; }

 private:
  absl::Status EnqueueWith(const cublasLtMatmulAlgo_t& algo, cudaStream_t stream) const;
  // Up to `want` of the heuristic's answers for a workspace of `workspace_bytes`; empty
  // when cuBLASLt has none for this GEMM.
  absl::StatusOr<std::vector<cublasLtMatmulHeuristicResult_t>> AskHeuristic(size_t workspace_bytes,
                                                                            int want) const;

  cublasLtHandle_t lt_ = nullptr;
  MatmulSpec spec_;
  LtMatmulDesc desc_;
  LtMatrixLayout lt_a_, lt_b_, lt_d_;  // cuBLASLt operand A = our B^T, B = our A, D = C
  std::vector<cublasLtMatmulHeuristicResult_t> heuristics_;
  int chosen_ = 0;
  bool autotuned_ = false;
  int limited_index_ = -1;  // the workspace-limited candidate, if any
  size_t limited_bytes_ = 0;
  float host_alpha_ = 1.0f, host_beta_ = 0.0f;
};

}  // namespace gemmprof::kernels
