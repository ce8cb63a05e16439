// fp8-rowwise with promoted accumulation (dgrad, wgrad) on fp8-block's batched overlapped
// pingpong form for 1x128 scales (block_gemm_vec128_batched_overlapped_pingpong.cu): the
// row-wise scale vectors read as 1x128 scales equal along K (block_gemm_impl.cuh,
// kRowScales), so each K tile's promotion multiplies its partial sums by the row's and the
// column's scale and the epilogue is a plain store of the whole 64x128 tile. The recipe
// applies the scales once, in the epilogue: these are the same products summed in another
// fp32 rounding order. It pays where the epilogue is most of the work: wgrad, whose K is
// one expert's tokens (one or two K tiles per output tile).
#include "kernels/cutlass/block_gemm_impl.cuh"

namespace gemmprof::kernels::cutlass_gemm {

namespace {
GEMMPROF_CUTLASS_OVERLAPPED_BATCHED_BLOCK_GEMM_TYPES(RowwisePromotedPingpong, kRowScales, 64,
                                                     Pingpong, TmaWarpSpecialized, Epilogue64x128,
                                                     AsBuilt, ", epilogue tile 64x128");
}  // namespace

Made MakeRowwisePromotedPingpong(const RowwiseProblem& problem, int device) {
  return BatchedBlockGemm<RowwisePromotedPingpong>::Make(RowwiseAsGroup(problem), problem.groups,
                                                         device);
}

}  // namespace gemmprof::kernels::cutlass_gemm
