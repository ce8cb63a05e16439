// CUTLASS FP8 row-wise GEMM (block_gemm_kernels.h), batched: e4m3 x e4m3, FP8 fast
// accumulation, pingpong schedule, tile 128x128x128, cluster 2x1x1.
#include "kernels/cutlass/rowwise_gemm_impl.cuh"

namespace gemmprof::kernels::cutlass_gemm {

namespace {
GEMMPROF_CUTLASS_ROWWISE_GEMM_TYPES(RowwiseTile128, 128, 2, 1, Pingpong, TmaWarpSpecialized,
                                    FP8FastAccum);
}  // namespace

Made MakeRowwiseTile128(const RowwiseProblem& problem, int device) {
  return RowwiseGemm<RowwiseTile128>::Make(problem, device, kFastAccumulation);
}

}  // namespace gemmprof::kernels::cutlass_gemm
