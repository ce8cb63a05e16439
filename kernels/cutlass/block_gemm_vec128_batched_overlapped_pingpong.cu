// CUTLASS FP8 block-scaled GEMM over groups of one size as one batch, e4m3 x e4m3, B^T
// scales 1x128 (wgrad), pingpong schedule, tile 64x128x128, each K block's promotion
// overlapped with the next block's MMAs (overlapped_mainloop.cuh). The epilogue stores
// the whole 64x128 tile at once (one shared-memory buffer, one TMA store) rather than
// CUTLASS's four 64x32 pieces: wgrad writes an output tile per four K blocks (Qwen3's
// 512-token experts) or per one (DeepSeek-V3's 128), so its epilogue is as long as its
// mainloop, and one store per tile shortens it (docs/benchmarks.md, "Kernel forms").
#include "kernels/cutlass/block_gemm_impl.cuh"

namespace gemmprof::kernels::cutlass_gemm {

namespace {
GEMMPROF_CUTLASS_OVERLAPPED_BATCHED_BLOCK_GEMM_TYPES(Vec128BatchedOverlappedPingpong, 1, 64,
                                                     Pingpong, TmaWarpSpecialized, Epilogue64x128,
                                                     AsBuilt, ", epilogue tile 64x128");
}  // namespace

Made MakeVec128BatchedOverlappedPingpong(const Group& first, int groups, int device) {
  return BatchedBlockGemm<Vec128BatchedOverlappedPingpong>::Make(first, groups, device);
}

}  // namespace gemmprof::kernels::cutlass_gemm
