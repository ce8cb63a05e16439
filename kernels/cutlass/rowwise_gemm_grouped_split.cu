// CUTLASS FP8 row-wise GEMM (block_gemm_kernels.h), grouped (pointer arrays, any size per
// group): e4m3 x e4m3, partial sums promoted to fp32, pingpong, tile 64x128x128, cluster 1x2x1.
#include "kernels/cutlass/rowwise_gemm_impl.cuh"

namespace gemmprof::kernels::cutlass_gemm {

namespace {
GEMMPROF_CUTLASS_GROUPED_ROWWISE_GEMM_TYPES(RowwiseGroupedSplit, Sm90, 64, 1, 2, Pingpong,
                                            Pingpong, );
}  // namespace

Made MakeRowwiseGroupedSplit(const std::vector<Group>& groups, int device) {
  return GroupedRowwiseGemm<RowwiseGroupedSplit>::Make(groups, device, kPromotedAccumulation);
}

}  // namespace gemmprof::kernels::cutlass_gemm
