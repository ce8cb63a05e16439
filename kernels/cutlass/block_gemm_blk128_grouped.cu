// CUTLASS grouped FP8 block-scaled GEMM, e4m3 x e4m3, B^T scales 128x128 (fprop, dgrad),
// cooperative schedule, tile 128x128x128.
#include "kernels/cutlass/block_gemm_impl.cuh"

namespace gemmprof::kernels::cutlass_gemm {

namespace {
GEMMPROF_CUTLASS_BLOCK_GEMM_TYPES(Blk128Grouped, 128, 128, Cooperative);
}  // namespace

Made MakeBlk128Grouped(const std::vector<Group>& groups, int device) {
  return BlockGemm<Blk128Grouped>::Make(groups, device);
}

}  // namespace gemmprof::kernels::cutlass_gemm
