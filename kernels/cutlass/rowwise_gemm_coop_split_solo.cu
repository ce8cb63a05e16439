// CUTLASS FP8 row-wise GEMM (block_gemm_kernels.h), batched: the cooperative Split form of
// rowwise_gemm_coop_split.cu (partial sums promoted to fp32, each K tile's promotion
// overlapped with the next tile's MMAs, the scales in the epilogue) without a cluster, as
// fp8-block's batched cooperative forms run.
#include "kernels/cutlass/rowwise_gemm_impl.cuh"

namespace gemmprof::kernels::cutlass_gemm {

namespace {
GEMMPROF_CUTLASS_OVERLAPPED_ROWWISE_GEMM_TYPES(RowwiseCoopSplitSolo, 128, 1, 1, Cooperative,
                                               TmaWarpSpecializedCooperative,
                                               cutlass::epilogue::collective::EpilogueTileAuto, "");
}  // namespace

Made MakeRowwiseCooperativeSplitSolo(const RowwiseProblem& problem, int device) {
  return RowwiseGemm<RowwiseCoopSplitSolo>::Make(problem, device, kPromotedAccumulation);
}

}  // namespace gemmprof::kernels::cutlass_gemm
