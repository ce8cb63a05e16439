// The batched overlapped pingpong form for B^T scales 1x128 (wgrad;
// block_gemm_vec128_batched_overlapped_pingpong.cu), with the two consumer warp groups'
// mainloops running at the same time (concurrent_mainloop.cuh).
#include "kernels/cutlass/block_gemm_impl.cuh"
#include "kernels/cutlass/concurrent_mainloop.cuh"

namespace gemmprof::kernels::cutlass_gemm {

namespace {
using WholeTileEpilogue = cute::Shape<cute::_64, cute::_128>;
GEMMPROF_CUTLASS_CONCURRENT_BATCHED_BLOCK_GEMM_TYPES(Vec128BatchedConcurrentPingpong, 1,
                                                     WholeTileEpilogue, AsBuilt,
                                                     ", epilogue tile 64x128");
}  // namespace

Made MakeVec128BatchedConcurrentPingpong(const Group& first, int groups, int device) {
  // The warp groups' K loops run at once only where two tiles' K loops fit the stages
  // (concurrent_mainloop.cuh); the kernel does not check.
  constexpr int kMaxKTiles = Vec128BatchedConcurrentPingpong::Mainloop::kMaxKTiles;
  if ((first.k + 127) / 128 > kMaxKTiles) {
    Made refused;
    refused.unsupported = true;
    refused.error =
        "its warp groups' K loops run at once only up to K = " + std::to_string(kMaxKTiles * 128) +
        " (" + std::to_string(kMaxKTiles) + " K tiles, half its stages); this K is " +
        std::to_string(first.k);
    return refused;
  }
  return BatchedBlockGemm<Vec128BatchedConcurrentPingpong>::Make(first, groups, device);
}

}  // namespace gemmprof::kernels::cutlass_gemm
