// CUTLASS FP8 block-scaled GEMM over groups of one size as one batch, e4m3 x e4m3, B^T
// scales 128x128 (fprop, dgrad), cooperative schedule, tile 128x128x128, each K block's promotion
// overlapped with the next block's MMAs (overlapped_mainloop.cuh).
#include "kernels/cutlass/block_gemm_impl.cuh"

namespace gemmprof::kernels::cutlass_gemm {

namespace {
GEMMPROF_CUTLASS_OVERLAPPED_BATCHED_BLOCK_GEMM_TYPES(
    Blk128BatchedOverlapped, 128, 128, Cooperative, TmaWarpSpecializedCooperative,
    cutlass::epilogue::collective::EpilogueTileAuto, AsBuilt, "");
}  // namespace

Made MakeBlk128BatchedOverlapped(const Group& first, int groups, int device) {
  return BatchedBlockGemm<Blk128BatchedOverlapped>::Make(first, groups, device);
}

}  // namespace gemmprof::kernels::cutlass_gemm
