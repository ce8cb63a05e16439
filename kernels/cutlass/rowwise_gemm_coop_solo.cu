// CUTLASS FP8 row-wise GEMM (block_gemm_kernels.h), batched: e4m3 x e4m3 with FP8 fast
// accumulation, cooperative (both consumer warp groups on one tile), tile 128x128x128, no
// cluster (rowwise_gemm_coop.cu has a 1x2 one).
#include "kernels/cutlass/rowwise_gemm_impl.cuh"

namespace gemmprof::kernels::cutlass_gemm {

namespace {
GEMMPROF_CUTLASS_ROWWISE_GEMM_TYPES(RowwiseCoopSolo, 128, 1, 1, Cooperative,
                                    TmaWarpSpecializedCooperative, FP8FastAccum);
}  // namespace

Made MakeRowwiseCooperativeSolo(const RowwiseProblem& problem, int device) {
  return RowwiseGemm<RowwiseCoopSolo>::Make(problem, device, kFastAccumulation);
}

}  // namespace gemmprof::kernels::cutlass_gemm
