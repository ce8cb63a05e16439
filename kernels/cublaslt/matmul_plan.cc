#include "kernels/cublaslt/matmul_plan.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "kernels/cuda/cuda_handles.h"

namespace gemmprof::kernels {
namespace {

absl::Status SetScale(LtMatmulDesc& desc, cublasLtMatmulDescAttributes_t mode_attr,
                      cublasLtMatmulDescAttributes_t ptr_attr,
                      std::optional<cublasLtMatmulMatrixScale_t> mode, const void* ptr) {
  if (!mode.has_value()) return absl::OkStatus();
  // Per-tensor scaling is cuBLASLt's default mode; only the block modes are named.
  if (*mode != CUBLASLT_MATMUL_MATRIX_SCALE_SCALAR_32F) {
    RETURN_IF_ERROR(desc.Set(mode_attr, static_cast<int32_t>(*mode)));
  }
  return desc.Set(ptr_attr, ptr);
}

absl::StatusOr<LtMatmulDesc> MakeDesc(const MatmulSpec& s) {
  ASSIGN_OR_RETURN(LtMatmulDesc desc, LtMatmulDesc::Create(s.compute, CUDA_R_32F));
  RETURN_IF_ERROR(desc.Set(CUBLASLT_MATMUL_DESC_TRANSA, CUBLAS_OP_T));
  RETURN_IF_ERROR(desc.Set(CUBLASLT_MATMUL_DESC_TRANSB, CUBLAS_OP_N));
  // cuBLASLt's A is our B^T and its B is our A.
  RETURN_IF_ERROR(SetScale(desc, CUBLASLT_MATMUL_DESC_A_SCALE_MODE,
                           CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, s.bt_scale_mode, s.bt_scale));
  RETURN_IF_ERROR(SetScale(desc, CUBLASLT_MATMUL_DESC_B_SCALE_MODE,
                           CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, s.a_scale_mode, s.a_scale));
  if (s.fast_accum.has_value()) {
    RETURN_IF_ERROR(
        desc.Set(CUBLASLT_MATMUL_DESC_FAST_ACCUM, static_cast<int8_t>(*s.fast_accum ? 1 : 0)));
  }
  if (s.device_alpha != nullptr) {
    RETURN_IF_ERROR(desc.Set(CUBLASLT_MATMUL_DESC_POINTER_MODE, CUBLASLT_POINTER_MODE_DEVICE));
  }
  return desc;
}

// Group g of a batch starts g * rows * cols elements after group 0 (a dense [rows, cols]
// matrix per group, groups stored back to back).
absl::Status SetBatch(LtMatrixLayout& layout, int64_t batch, int64_t rows, int64_t cols) {
  if (batch == 1) return absl::OkStatus();
  RETURN_IF_ERROR(layout.Set(CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, static_cast<int32_t>(batch)));
  return layout.Set(CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, rows * cols);
}

std::string TypeName(cudaDataType_t t) {
  switch (t) {
    case CUDA_R_16BF:
      return "bf16";
    case CUDA_R_32F:
      return "fp32";
    case CUDA_R_8F_E4M3:
      return "e4m3";
    case CUDA_R_8F_E5M2:
      return "e5m2";
    case CUDA_R_4F_E2M1:
      return "e2m1";
    default:
      return absl::StrCat("type ", static_cast<int>(t));
  }
}

std::string ScaleName(std::optional<cublasLtMatmulMatrixScale_t> mode) {
  if (!mode.has_value()) return "";
  switch (*mode) {
    case CUBLASLT_MATMUL_MATRIX_SCALE_SCALAR_32F:
      return " with a per-tensor scale";
    case CUBLASLT_MATMUL_MATRIX_SCALE_VEC128_32F:
      return " with VEC128_32F block scales";
    case CUBLASLT_MATMUL_MATRIX_SCALE_BLK128x128_32F:
      return " with BLK128x128_32F block scales";
    case CUBLASLT_MATMUL_MATRIX_SCALE_VEC32_UE8M0:
      return " with VEC32_UE8M0 block scales";
    case CUBLASLT_MATMUL_MATRIX_SCALE_VEC16_UE4M3:
      return " with VEC16_UE4M3 block scales";
    case CUBLASLT_MATMUL_MATRIX_SCALE_OUTER_VEC_32F:
      return " with OUTER_VEC_32F row scales";
    default:
      return absl::StrCat(" with scale mode ", static_cast<int>(*mode));
  }
}

// "cuBLASLt has no algorithm for 200x384x272 x 4 groups (A e4m3 with VEC128_32F block
// scales, B^T e4m3 with BLK128x128_32F block scales, C bf16)".
std::string NoAlgorithmMessage(const MatmulSpec& s) {
  return absl::StrCat("cuBLASLt has no algorithm for ", s.m, "x", s.k, "x", s.n,
                      s.batch > 1 ? absl::StrCat(" x ", s.batch, " groups") : "", " (A ",
                      TypeName(s.a_type), ScaleName(s.a_scale_mode), ", B^T ", TypeName(s.bt_type),
                      ScaleName(s.bt_scale_mode), ", C ", TypeName(s.c_type), ")");
}

int32_t AlgoConfig(const cublasLtMatmulAlgo_t& algo, cublasLtMatmulAlgoConfigAttributes_t attr) {
  // Every attribute read here is 32-bit or smaller; a failed read shows as -1.
  uint32_t v = 0;
  size_t written = 0;
  if (cublasLtMatmulAlgoConfigGetAttribute(&algo, attr, &v, sizeof(v), &written) !=
      CUBLAS_STATUS_SUCCESS)
    return -1;
  return static_cast<int32_t>(v);
}

}  // namespace

absl::StatusOr<MatmulPlan> MatmulPlan::Create(cublasLtHandle_t lt, const MatmulSpec& spec,
                                              int max_candidates) {
  if (spec.batch < 1 || spec.batch > std::numeric_limits<int32_t>::max()) {
    return absl::InvalidArgumentError(
        absl::StrCat("matmul batch (groups) ", spec.batch, " must be in [1, 2^31)"));
  }
  MatmulPlan p;
  p.lt_ = lt;
  p.spec_ = spec;
  ASSIGN_OR_RETURN(p.desc_, MakeDesc(spec));
  const uint64_t m = spec.m, n = spec.n, k = spec.k;
  ASSIGN_OR_RETURN(p.lt_a_, LtMatrixLayout::Create(spec.bt_type, k, n, spec.k));
  ASSIGN_OR_RETURN(p.lt_b_, LtMatrixLayout::Create(spec.a_type, k, m, spec.k));
  ASSIGN_OR_RETURN(p.lt_d_, LtMatrixLayout::Create(spec.c_type, n, m, spec.n));
  RETURN_IF_ERROR(SetBatch(p.lt_a_, spec.batch, spec.n, spec.k));
  RETURN_IF_ERROR(SetBatch(p.lt_b_, spec.batch, spec.m, spec.k));
  RETURN_IF_ERROR(SetBatch(p.lt_d_, spec.batch, spec.m, spec.n));
  ASSIGN_OR_RETURN(p.heuristics_,
                   p.AskHeuristic(spec.workspace_bytes, std::max(1, max_candidates)));
  if (p.heuristics_.empty()) return absl::FailedPreconditionError(NoAlgorithmMessage(spec));
  return p;
}

absl::StatusOr<std::vector<cublasLtMatmulHeuristicResult_t>> MatmulPlan::AskHeuristic(
    size_t workspace_bytes, int want) const {
  ASSIGN_OR_RETURN(LtMatmulPreference pref, LtMatmulPreference::Create(workspace_bytes));
  std::vector<cublasLtMatmulHeuristicResult_t> results(want);
  int returned = 0;
  const cublasStatus_t st =
      cublasLtMatmulAlgoGetHeuristic(lt_, desc_.get(), lt_a_.get(), lt_b_.get(), lt_d_.get(),
                                     lt_d_.get(), pref.get(), want, results.data(), &returned);
  // cuBLASLt says "none" either way: NOT_SUPPORTED, or success with no result.
  if (st == CUBLAS_STATUS_NOT_SUPPORTED || (st == CUBLAS_STATUS_SUCCESS && returned <= 0)) {
    return std::vector<cublasLtMatmulHeuristicResult_t>();
  }
  CUBLAS_RETURN_IF_ERROR(st);
  results.resize(returned);
  return results;
}

absl::StatusOr<bool> MatmulPlan::AddWorkspaceLimitedCandidate(size_t limit_bytes) {
  if (limit_bytes >= spec_.workspace_bytes || limited_index_ >= 0) return false;
  ASSIGN_OR_RETURN(const std::vector<cublasLtMatmulHeuristicResult_t> answer,
                   AskHeuristic(limit_bytes, 1));
  if (answer.empty()) return false;
  const cublasLtMatmulHeuristicResult_t& result = answer.front();
  for (const cublasLtMatmulHeuristicResult_t& h : heuristics_) {
    if (std::memcmp(&h.algo, &result.algo, sizeof(result.algo)) == 0) return false;
  }
  heuristics_.push_back(result);
  limited_index_ = static_cast<int>(heuristics_.size()) - 1;
  limited_bytes_ = limit_bytes;
  return true;
}

absl::Status MatmulPlan::EnqueueWith(const cublasLtMatmulAlgo_t& algo, cudaStream_t stream) const {
  const void* alpha = spec_.device_alpha ? static_cast<const void*>(spec_.device_alpha)
                                         : static_cast<const void*>(&host_alpha_);
  const void* beta = spec_.device_alpha ? static_cast<const void*>(spec_.device_beta)
                                        : static_cast<const void*>(&host_beta_);
  CUBLAS_RETURN_IF_ERROR(cublasLtMatmul(
      lt_, desc_.get(), alpha, spec_.bt, lt_a_.get(), spec_.a, lt_b_.get(), beta, spec_.c,
      lt_d_.get(), spec_.c, lt_d_.get(), &algo, spec_.workspace, spec_.workspace_bytes, stream));
  return absl::OkStatus();
}

absl::Status MatmulPlan::Enqueue(cudaStream_t stream) const {
  return EnqueueWith(heuristics_[chosen_].algo, stream);
}

absl::Status MatmulPlan::Choose(int index, bool autotuned) {
  if (index < 0 || index >= candidates()) {
    return absl::OutOfRangeError(absl::StrCat("candidate ", index, " of ", candidates()));
  }
  chosen_ = index;
  autotuned_ = autotuned;
  return absl::OkStatus();
}

std::string MatmulPlan::AlgorithmDescription() const {
  const cublasLtMatmulAlgo_t& a = heuristics_[chosen_].algo;
  return absl::StrFormat(
      "algo=%d tile=%d stages=%d splitK=%d reduction=%d swizzle=%d custom=%d cluster=%d "
      "workspace=%d (candidate %d of %d%s%s)",
      AlgoConfig(a, CUBLASLT_ALGO_CONFIG_ID), AlgoConfig(a, CUBLASLT_ALGO_CONFIG_TILE_ID),
      AlgoConfig(a, CUBLASLT_ALGO_CONFIG_STAGES_ID), AlgoConfig(a, CUBLASLT_ALGO_CONFIG_SPLITK_NUM),
      AlgoConfig(a, CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME),
      AlgoConfig(a, CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING),
      AlgoConfig(a, CUBLASLT_ALGO_CONFIG_CUSTOM_OPTION),
      AlgoConfig(a, CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID),
      static_cast<int64_t>(heuristics_[chosen_].workspaceSize), chosen_ + 1,
      static_cast<int>(heuristics_.size()),
      chosen_ == limited_index_
          ? absl::StrCat(", the heuristic's answer for a ", limited_bytes_ >> 20, " MiB workspace")
          : "",
      autotuned_ ? ", autotuned" : ", heuristic");
}

}  // namespace gemmprof::kernels
