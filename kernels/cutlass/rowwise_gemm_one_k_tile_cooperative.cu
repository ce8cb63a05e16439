// rowwise_gemm_one_k_tile_pingpong.cu's GEMM as a cooperative kernel: tile 256x128x128,
// both consumer warp groups on one tile (128x128 each), no cluster, K <= 128.
#include "kernels/cutlass/block_gemm_impl.cuh"

namespace gemmprof::kernels::cutlass_gemm {

namespace {
GEMMPROF_CUTLASS_MAINLOOP_BATCHED_BLOCK_GEMM_TYPES(RowwiseOneKTileCooperative, kRowScales, 256,
                                                   Cooperative, TmaWarpSpecializedCooperative,
                                                   cutlass::epilogue::collective::EpilogueTileAuto,
                                                   AsBuilt, OneKTileBlockwiseMainloop,
                                                   ", one K tile");
}  // namespace

Made MakeRowwiseOneKTileCooperative(const RowwiseProblem& problem, int device) {
  if (problem.k > 128) return RefusedOneKTile(problem.k);
  return BatchedBlockGemm<RowwiseOneKTileCooperative>::Make(RowwiseAsGroup(problem), problem.groups,
                                                            device);
}

}  // namespace gemmprof::kernels::cutlass_gemm
