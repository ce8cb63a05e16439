// CUTLASS FP8 GEMM with per-row A and per-row B^T scales in the epilogue (fp8-rowwise),
// e4m3 x e4m3, FP8 fast accumulation, pingpong schedule, tile 128x128x128, cluster 2x1x1.
#include "kernels/cutlass/rowwise_gemm_impl.cuh"

namespace gemmprof::kernels::cutlass_gemm {

namespace {
GEMMPROF_CUTLASS_ROWWISE_GEMM_TYPES(RowwiseTile128, 128, 2, 1, Pingpong, TmaWarpSpecialized);
}  // namespace

Made MakeRowwiseTile128(const RowwiseProblem& problem, int device) {
  return RowwiseGemm<RowwiseTile128>::Make(problem, device);
}

}  // namespace gemmprof::kernels::cutlass_gemm
