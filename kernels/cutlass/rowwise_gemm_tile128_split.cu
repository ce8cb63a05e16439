// CUTLASS FP8 row-wise GEMM (block_gemm_kernels.h), batched: e4m3 x e4m3, partial sums
// promoted to fp32 (dgrad's and wgrad's accumulation), pingpong, tile 128x128x128, cluster
// 2x1x1.
#include "kernels/cutlass/rowwise_gemm_impl.cuh"

namespace gemmprof::kernels::cutlass_gemm {

namespace {
GEMMPROF_CUTLASS_ROWWISE_GEMM_TYPES(RowwiseTile128Split, 128, 2, 1, Pingpong, TmaWarpSpecialized, );
}  // namespace

Made MakeRowwiseTile128Split(const RowwiseProblem& problem, int device) {
  return RowwiseGemm<RowwiseTile128Split>::Make(problem, device, kPromotedAccumulation);
}

}  // namespace gemmprof::kernels::cutlass_gemm
