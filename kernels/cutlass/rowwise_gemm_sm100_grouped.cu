// CUTLASS FP8 row-wise grouped GEMM for Blackwell (sm_100a only; block_gemm_kernels.h):
// e4m3 x e4m3, CUTLASS's sm100 pointer-array collective (UMMA, one SM per tile, tile
// 128x128x128, cluster 1x1x1), fp32 accumulation in tensor memory, the row-wise epilogue.
// No Blackwell GPU has run it (cutlass_gemm.cc gates it by sm).
#include "kernels/cutlass/rowwise_gemm_impl.cuh"

namespace gemmprof::kernels::cutlass_gemm {

namespace {
GEMMPROF_CUTLASS_GROUPED_ROWWISE_GEMM_TYPES(Sm100RowwiseGrouped, Sm100, 128, 1, 1, 1SmSm100, 1Sm, );
}  // namespace

Made MakeSm100RowwiseGrouped(const std::vector<Group>& groups, int device) {
  return GroupedRowwiseGemm<Sm100RowwiseGrouped>::Make(groups, device,
                                                       "fp32 accumulation in tensor memory");
}

}  // namespace gemmprof::kernels::cutlass_gemm
