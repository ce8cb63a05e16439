// CUTLASS FP8 row-wise GEMM (block_gemm_kernels.h), batched: e4m3 x e4m3, FP8 fast
// accumulation, pingpong schedule, tile 64x128x128, cluster 1x2x1.
#include "kernels/cutlass/rowwise_gemm_impl.cuh"

namespace gemmprof::kernels::cutlass_gemm {

namespace {
GEMMPROF_CUTLASS_ROWWISE_GEMM_TYPES(RowwiseTile64, 64, 1, 2, Pingpong, TmaWarpSpecialized,
                                    FP8FastAccum);
}  // namespace

Made MakeRowwiseTile64(const RowwiseProblem& problem, int device) {
  return RowwiseGemm<RowwiseTile64>::Make(problem, device, kFastAccumulation);
}

}  // namespace gemmprof::kernels::cutlass_gemm
