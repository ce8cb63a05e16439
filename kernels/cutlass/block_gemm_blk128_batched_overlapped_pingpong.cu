// CUTLASS FP8 block-scaled GEMM over groups of one size as one batch, e4m3 x e4m3, B^T
// scales 128x128 (fprop, dgrad), pingpong schedule, tile 64x128x128, each K block's
// promotion overlapped with the next block's MMAs (overlapped_mainloop.cuh).
#include "kernels/cutlass/block_gemm_impl.cuh"

namespace gemmprof::kernels::cutlass_gemm {

namespace {
GEMMPROF_CUTLASS_OVERLAPPED_BATCHED_BLOCK_GEMM_TYPES(
    Blk128BatchedOverlappedPingpong, 128, 64, Pingpong, TmaWarpSpecialized,
    cutlass::epilogue::collective::EpilogueTileAuto, "");
}  // namespace

Made MakeBlk128BatchedOverlappedPingpong(const Group& first, int groups, int device) {
  return BatchedBlockGemm<Blk128BatchedOverlappedPingpong>::Make(first, groups, device);
}

}  // namespace gemmprof::kernels::cutlass_gemm
