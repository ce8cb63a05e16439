// CUTLASS FP8 row-wise GEMM (block_gemm_kernels.h), batched: e4m3 x e4m3, partial sums
// promoted to fp32, pingpong, tile 128x128x128, cluster 1x2x1 (experts of one M tile).
#include "kernels/cutlass/rowwise_gemm_impl.cuh"

namespace gemmprof::kernels::cutlass_gemm {

namespace {
GEMMPROF_CUTLASS_ROWWISE_GEMM_TYPES(RowwiseTile128NSplit, 128, 1, 2, Pingpong,
                                    TmaWarpSpecialized, );
}  // namespace

Made MakeRowwiseTile128NSplit(const RowwiseProblem& problem, int device) {
  return RowwiseGemm<RowwiseTile128NSplit>::Make(problem, device, kPromotedAccumulation);
}

}  // namespace gemmprof::kernels::cutlass_gemm
