// The batched overlapped pingpong form for B^T scales 1x128 (wgrad;
// block_gemm_vec128_batched_overlapped_pingpong.cu), with the two consumer warp groups'
// mainloops running at the same time (concurrent_mainloop.cuh).
#include "kernels/cutlass/block_gemm_impl.cuh"
#include "kernels/cutlass/concurrent_mainloop.cuh"

namespace gemmprof::kernels::cutlass_gemm {

namespace {
GEMMPROF_CUTLASS_CONCURRENT_BATCHED_BLOCK_GEMM_TYPES(Vec128BatchedConcurrentPingpong, 1,
                                                     Epilogue64x128, AsBuilt,
                                                     ", epilogue tile 64x128");
}  // namespace

Made MakeVec128BatchedConcurrentPingpong(const Group& first, int groups, int device) {
  constexpr int kMaxKTiles = Vec128BatchedConcurrentPingpong::Mainloop::kMaxKTiles;
  if ((first.k + 127) / 128 > kMaxKTiles) return RefusedConcurrentK(first.k, kMaxKTiles);
  return BatchedBlockGemm<Vec128BatchedConcurrentPingpong>::Make(first, groups, device);
}

}  // namespace gemmprof::kernels::cutlass_gemm
