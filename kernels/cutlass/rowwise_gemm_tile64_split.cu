// CUTLASS FP8 row-wise GEMM (block_gemm_kernels.h), batched: e4m3 x e4m3, partial sums
// promoted to fp32 (dgrad's and wgrad's accumulation), each K tile's promotion overlapped
// with the next tile's MMAs (overlapped_mainloop.cuh), pingpong, tile 64x128x128, cluster
// 1x2x1, the epilogue storing the whole 64x128 tile at once.
#include "kernels/cutlass/rowwise_gemm_impl.cuh"

namespace gemmprof::kernels::cutlass_gemm {

namespace {
GEMMPROF_CUTLASS_OVERLAPPED_ROWWISE_GEMM_TYPES(RowwiseTile64Split, 64, 1, 2, Pingpong,
                                               TmaWarpSpecialized, Epilogue64x128,
                                               ", epilogue tile 64x128");
}  // namespace

Made MakeRowwiseTile64Split(const RowwiseProblem& problem, int device) {
  return RowwiseGemm<RowwiseTile64Split>::Make(problem, device, kPromotedAccumulation);
}

}  // namespace gemmprof::kernels::cutlass_gemm
