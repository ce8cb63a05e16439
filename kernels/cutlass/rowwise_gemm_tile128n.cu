// CUTLASS FP8 row-wise GEMM (block_gemm_kernels.h), batched: e4m3 x e4m3, FP8 fast
// accumulation, pingpong, tile 128x128x128, cluster 1x2x1 (experts of one M tile).
#include "kernels/cutlass/rowwise_gemm_impl.cuh"

namespace gemmprof::kernels::cutlass_gemm {

namespace {
GEMMPROF_CUTLASS_ROWWISE_GEMM_TYPES(RowwiseTile128N, 128, 1, 2, Pingpong, TmaWarpSpecialized,
                                    FP8FastAccum);
}  // namespace

Made MakeRowwiseTile128N(const RowwiseProblem& problem, int device) {
  return RowwiseGemm<RowwiseTile128N>::Make(problem, device, kFastAccumulation);
}

}  // namespace gemmprof::kernels::cutlass_gemm
