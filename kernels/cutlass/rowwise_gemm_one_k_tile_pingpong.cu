// fp8-rowwise with promoted accumulation where each output tile has one K tile (K <= 128:
// the wgrad of experts with at most 128 tokens), the scales applied at that tile's
// promotion (block_gemm_impl.cuh, kRowScales; overlapped_mainloop.cuh, OneKTile): no
// partial accumulator, so each warp group takes a 128x128 tile (pingpong, tile
// 128x128x128, no cluster), stored 64x128 at a time (CUTLASS's pingpong epilogue takes 64
// rows). Those GEMMs write as many bytes as they read and have little arithmetic per
// output: larger tiles mean fewer tile starts and stores per byte.
#include "kernels/cutlass/block_gemm_impl.cuh"

namespace gemmprof::kernels::cutlass_gemm {

namespace {
GEMMPROF_CUTLASS_MAINLOOP_BATCHED_BLOCK_GEMM_TYPES(RowwiseOneKTilePingpong, kRowScales, 128,
                                                   Pingpong, TmaWarpSpecialized, Epilogue64x128,
                                                   AsBuilt, OneKTileBlockwiseMainloop,
                                                   ", one K tile, epilogue tile 64x128");
}  // namespace

Made MakeRowwiseOneKTilePingpong(const RowwiseProblem& problem, int device) {
  if (problem.k > 128) return RefusedOneKTile(problem.k);
  return BatchedBlockGemm<RowwiseOneKTilePingpong>::Make(RowwiseAsGroup(problem), problem.groups,
                                                         device);
}

}  // namespace gemmprof::kernels::cutlass_gemm
