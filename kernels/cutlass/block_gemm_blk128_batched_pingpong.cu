// CUTLASS FP8 block-scaled GEMM over groups of one size as one batch, e4m3 x e4m3, B^T
// scales 128x128 (fprop, dgrad), pingpong schedule, tile 64x128x128.
#include "kernels/cutlass/block_gemm_impl.cuh"

namespace gemmprof::kernels::cutlass_gemm {

namespace {
GEMMPROF_CUTLASS_BATCHED_BLOCK_GEMM_TYPES(Blk128BatchedPingpong, 128, 64, Pingpong,
                                          TmaWarpSpecialized);
}  // namespace

Made MakeBlk128BatchedPingpong(const Group& first, int groups, int device) {
  return BatchedBlockGemm<Blk128BatchedPingpong>::Make(first, groups, device);
}

}  // namespace gemmprof::kernels::cutlass_gemm
