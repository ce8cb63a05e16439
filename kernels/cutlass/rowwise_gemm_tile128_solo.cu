// CUTLASS FP8 row-wise GEMM (block_gemm_kernels.h), batched: e4m3 x e4m3 with FP8 fast
// accumulation, pingpong, tile 128x128x128, no cluster (rowwise_gemm_tile128.cu has a 2x1
// one, rowwise_gemm_tile128n.cu a 1x2 one).
#include "kernels/cutlass/rowwise_gemm_impl.cuh"

namespace gemmprof::kernels::cutlass_gemm {

namespace {
GEMMPROF_CUTLASS_ROWWISE_GEMM_TYPES(RowwiseTile128Solo, 128, 1, 1, Pingpong, TmaWarpSpecialized,
                                    FP8FastAccum);
}  // namespace

Made MakeRowwiseTile128Solo(const RowwiseProblem& problem, int device) {
  return RowwiseGemm<RowwiseTile128Solo>::Make(problem, device, kFastAccumulation);
}

}  // namespace gemmprof::kernels::cutlass_gemm
