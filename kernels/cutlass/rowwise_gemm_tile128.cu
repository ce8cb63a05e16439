// CUTLASS FP8 GEMM with per-row A and per-row B^T scales in the epilogue (fp8-rowwise),
// e4m3 x e4m3, FP8 fast accumulation, cooperative schedule, tile 128x128x128.
#include "kernels/cutlass/rowwise_gemm_impl.cuh"

namespace gemmprof::kernels::cutlass_gemm {

namespace {
GEMMPROF_CUTLASS_ROWWISE_GEMM_TYPES(RowwiseCooperative, 128, Cooperative,
                                    TmaWarpSpecializedCooperative);
}  // namespace

Made MakeRowwiseCooperative(const RowwiseProblem& problem, int device) {
  return RowwiseGemm<RowwiseCooperative>::Make(problem, device);
}

}  // namespace gemmprof::kernels::cutlass_gemm
