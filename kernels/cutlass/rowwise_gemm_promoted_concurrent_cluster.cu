// rowwise_gemm_promoted_concurrent.cu's form on a 2x1 cluster: the two CTAs of a cluster
// take neighbouring M tiles of one N tile, so B^T's 128-row tile is loaded once and
// multicast to both. A 64x128 tile whose K loop is one or two K tiles (the wgrad of
// 128- to 256-token experts) reads 1.5 to 3 bytes of operands from L2 per byte it writes;
// sharing B^T's tile takes a third of those reads away. The item's own rounds decide
// between this form and the one without a cluster (docs/benchmarks.md).
#include "kernels/cutlass/block_gemm_impl.cuh"
#include "kernels/cutlass/concurrent_mainloop.cuh"

namespace gemmprof::kernels::cutlass_gemm {

namespace {
GEMMPROF_CUTLASS_CLUSTERED_MAINLOOP_BATCHED_BLOCK_GEMM_TYPES(
    RowwisePromotedConcurrentCluster, kRowScales, 64, Pingpong, TmaWarpSpecialized, 2, 1,
    Epilogue64x128, AsBuilt, ConcurrentBlockwiseMainloop,
    ", promotion overlapped, mainloops concurrent, epilogue tile 64x128");
}  // namespace

Made MakeRowwisePromotedConcurrentCluster(const RowwiseProblem& problem, int device) {
  constexpr int kMaxKTiles = RowwisePromotedConcurrentCluster::Mainloop::kMaxKTiles;
  if ((problem.k + 127) / 128 > kMaxKTiles) return RefusedConcurrentK(problem.k, kMaxKTiles);
  return BatchedBlockGemm<RowwisePromotedConcurrentCluster>::Make(RowwiseAsGroup(problem),
                                                                  problem.groups, device);
}

}  // namespace gemmprof::kernels::cutlass_gemm
