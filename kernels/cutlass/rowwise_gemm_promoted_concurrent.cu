// rowwise_gemm_promoted_pingpong.cu's form with the two consumer warp groups' K loops
// running at the same time (concurrent_mainloop.cuh), as fp8-block's
// block_gemm_vec128_batched_concurrent_pingpong.cu: K up to half its stages' tiles.
#include "kernels/cutlass/block_gemm_impl.cuh"
#include "kernels/cutlass/concurrent_mainloop.cuh"

namespace gemmprof::kernels::cutlass_gemm {

namespace {
GEMMPROF_CUTLASS_CONCURRENT_BATCHED_BLOCK_GEMM_TYPES(RowwisePromotedConcurrent, kRowScales,
                                                     Epilogue64x128, AsBuilt,
                                                     ", epilogue tile 64x128");
}  // namespace

Made MakeRowwisePromotedConcurrent(const RowwiseProblem& problem, int device) {
  constexpr int kMaxKTiles = RowwisePromotedConcurrent::Mainloop::kMaxKTiles;
  if ((problem.k + 127) / 128 > kMaxKTiles) return RefusedConcurrentK(problem.k, kMaxKTiles);
  return BatchedBlockGemm<RowwisePromotedConcurrent>::Make(RowwiseAsGroup(problem), problem.groups,
                                                           device);
}

}  // namespace gemmprof::kernels::cutlass_gemm
