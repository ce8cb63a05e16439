// CUTLASS FP8 row-wise GEMM (block_gemm_kernels.h), batched: e4m3 x e4m3, partial sums
// promoted to fp32, each K tile's promotion overlapped with the next tile's MMAs
// (overlapped_mainloop.cuh), cooperative (both consumer warp groups on one tile), tile
// 128x128x128, cluster 1x2x1.
#include "kernels/cutlass/rowwise_gemm_impl.cuh"

namespace gemmprof::kernels::cutlass_gemm {

namespace {
GEMMPROF_CUTLASS_OVERLAPPED_ROWWISE_GEMM_TYPES(RowwiseCoopSplit, 128, 1, 2, Cooperative,
                                               TmaWarpSpecializedCooperative,
                                               cutlass::epilogue::collective::EpilogueTileAuto, "");
}  // namespace

Made MakeRowwiseCooperativeSplit(const RowwiseProblem& problem, int device) {
  return RowwiseGemm<RowwiseCoopSplit>::Make(problem, device, kPromotedAccumulation);
}

}  // namespace gemmprof::kernels::cutlass_gemm
