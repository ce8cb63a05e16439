// CUTLASS FP8 block-scaled GEMM over groups of one size as one batch, e4m3 x e4m3, B^T
// scales 128x128 (fprop, dgrad), pingpong schedule, tile 64x128x128, each K block's
// promotion overlapped with the next block's MMAs (overlapped_mainloop.cuh). The epilogue
// stores the whole 64x128 tile at once, each warp group from a shared-memory buffer of its
// own, and waits for a store to leave shared memory only before its next epilogue
// (deferred_store_epilogue.cuh), so one warp group's store overlaps the other's epilogue,
// which CUTLASS's own (64x32 pieces, waited for at each tile's end) does not allow
// (docs/benchmarks.md, "Kernel forms").
#include "kernels/cutlass/block_gemm_impl.cuh"

namespace gemmprof::kernels::cutlass_gemm {

namespace {
GEMMPROF_CUTLASS_OVERLAPPED_BATCHED_BLOCK_GEMM_TYPES(Blk128BatchedOverlappedPingpong, 128, 64,
                                                     Pingpong, TmaWarpSpecialized, Epilogue64x128,
                                                     PingpongDeferredStoreEpilogue,
                                                     ", epilogue tile 64x128, store wait deferred");
}  // namespace

Made MakeBlk128BatchedOverlappedPingpong(const Group& first, int groups, int device) {
  return BatchedBlockGemm<Blk128BatchedOverlappedPingpong>::Make(first, groups, device);
}

}  // namespace gemmprof::kernels::cutlass_gemm
