// CUTLASS FP8 GEMM with per-row A and per-row B^T scales in the epilogue (fp8-rowwise),
// e4m3 x e4m3, FP8 fast accumulation, pingpong schedule, tile 64x128x128.
#include "kernels/cutlass/rowwise_gemm_impl.cuh"

namespace gemmprof::kernels::cutlass_gemm {

namespace {
GEMMPROF_CUTLASS_ROWWISE_GEMM_TYPES(RowwisePingpong, 64, Pingpong, TmaWarpSpecialized);
}  // namespace

Made MakeRowwisePingpong(const RowwiseProblem& problem, int device) {
  return RowwiseGemm<RowwisePingpong>::Make(problem, device);
}

}  // namespace gemmprof::kernels::cutlass_gemm
