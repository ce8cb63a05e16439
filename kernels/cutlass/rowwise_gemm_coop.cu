// CUTLASS FP8 row-wise GEMM (block_gemm_kernels.h), batched: e4m3 x e4m3, FP8 fast
// accumulation, cooperative (both consumer warp groups on one tile), tile 128x128x128,
// cluster 1x2x1.
#include "kernels/cutlass/rowwise_gemm_impl.cuh"

namespace gemmprof::kernels::cutlass_gemm {

namespace {
GEMMPROF_CUTLASS_ROWWISE_GEMM_TYPES(RowwiseCoop, 128, 1, 2, Cooperative,
                                    TmaWarpSpecializedCooperative, FP8FastAccum);
}  // namespace

Made MakeRowwiseCooperative(const RowwiseProblem& problem, int device) {
  return RowwiseGemm<RowwiseCoop>::Make(problem, device, kFastAccumulation);
}

}  // namespace gemmprof::kernels::cutlass_gemm
