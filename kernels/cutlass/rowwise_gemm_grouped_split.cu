// CUTLASS FP8 row-wise GEMM (block_gemm_kernels.h), grouped (pointer arrays, any size per
// group): e4m3 x e4m3, partial sums promoted to fp32, each K tile's promotion overlapped
// with the next tile's MMAs (overlapped_mainloop.cuh), pingpong, tile 64x128x128, cluster
// 1x2x1. (The whole-tile epilogue of the batched 64-row form measured 1.5-5% slower here.)
#include "kernels/cutlass/rowwise_gemm_impl.cuh"

namespace gemmprof::kernels::cutlass_gemm {

namespace {
GEMMPROF_CUTLASS_OVERLAPPED_GROUPED_ROWWISE_GEMM_TYPES(
    RowwiseGroupedSplit, 64, 1, 2, Pingpong, Pingpong,
    cutlass::epilogue::collective::EpilogueTileAuto, "");
}  // namespace

Made MakeRowwiseGroupedSplit(const std::vector<Group>& groups, int device) {
  return GroupedRowwiseGemm<RowwiseGroupedSplit>::Make(groups, device, kPromotedAccumulation);
}

}  // namespace gemmprof::kernels::cutlass_gemm
