// CUTLASS grouped FP8 block-scaled GEMM, e4m3 x e4m3, B^T scales 1x128 (wgrad),
// cooperative schedule, tile 128x128x128.
#include "kernels/cutlass/block_gemm_impl.cuh"

namespace gemmprof::kernels::cutlass_gemm {

namespace {
GEMMPROF_CUTLASS_BLOCK_GEMM_TYPES(Vec128Grouped, 1, 128, Cooperative);
}  // namespace

Made MakeVec128Grouped(const std::vector<Group>& groups, int device) {
  return BlockGemm<Vec128Grouped>::Make(groups, device);
}

}  // namespace gemmprof::kernels::cutlass_gemm
