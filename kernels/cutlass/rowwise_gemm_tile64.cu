// CUTLASS FP8 GEMM with per-row A and per-row B^T scales in the epilogue (fp8-rowwise),
// e4m3 x e4m3, FP8 fast accumulation, pingpong schedule, tile 64x128x128, cluster 1x2x1.
#include "kernels/cutlass/rowwise_gemm_impl.cuh"

namespace gemmprof::kernels::cutlass_gemm {

namespace {
GEMMPROF_CUTLASS_ROWWISE_GEMM_TYPES(RowwiseTile64, 64, 1, 2, Pingpong, TmaWarpSpecialized);
}  // namespace

Made MakeRowwiseTile64(const RowwiseProblem& problem, int device) {
  return RowwiseGemm<RowwiseTile64>::Make(problem, device);
}

}  // namespace gemmprof::kernels::cutlass_gemm
