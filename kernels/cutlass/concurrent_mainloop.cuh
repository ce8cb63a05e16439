// The overlapped mainloop (overlapped_mainloop.cuh) for the pingpong kernel with the two
// consumer warp groups' mainloops running at the same time rather than in turns.
//
// CUTLASS's pingpong kernel orders the warp groups' mainloops one after the other (an
// order barrier waited before the collective's mma() and arrived at after it) so that
// one group's epilogue runs while the other's MMAs do. With block scaling a warp group's
// mainloop is not all MMAs: each K block's promotion is FP32 work, with 1x128 x 1x128
// scales (wgrad) two operations per accumulator element. Here mma() only records where
// the accumulators and shared tensors are, and the whole K loop runs in mma_tail(),
// which the kernel calls after it has let the other group's mainloop start: the two
// groups' K loops share the tensor cores. The epilogues still take turns (the kernel's
// second order barrier), and everything else is the overlapped mainloop's.
//
// Running the K loops at once does not make up for the promotion's cost (a short burst
// times it equal to the overlapped pingpong form: the turns are not what limits the
// loop), but under the power cap it is the faster of the two on the wgrad of 512-token
// experts, and the slower on one-K-block wgrad; the item's own rounds decide
// (docs/benchmarks.md, "Kernel forms").
//
// Only where a tile's K loop takes at most half the pipeline's stages. The producer fills
// the stages in tile order (one group's tile, then the other's) and a consumer's wait on
// a stage checks the parity of its fill, so a group may only wait on a stage whose
// previous fill was already waited for. Run in turns that always holds; run at once, the
// group on the later tile waits on stages the other group's tile may not have filled yet
// when the two tiles need more stages than the ring has, and would read stale data (and
// upset the ring's accounting). With 2 x K tiles <= stages the stage a group waits on
// last held that group's own previous tile. The host refuses longer K loops
// (kMaxKTiles; block_gemm_vec128_batched_concurrent_pingpong.cu). The kernel has no
// check of its own: a fallback to turns inside it made ptxas keep the accumulators in
// local memory, and a trap on a long K loop made it spill.
#pragma once

#include <type_traits>

#include "kernels/cutlass/overlapped_mainloop.cuh"

namespace gemmprof::kernels::cutlass_gemm {

template <class Base>
struct ConcurrentBlockwiseMainloop : OverlappedBlockwiseMainloop<Base> {
  using Overlapped = OverlappedBlockwiseMainloop<Base>;
  using typename Base::MainloopPipeline;
  using typename Base::Params;
  using typename Base::PipelineState;
  using typename Base::TensorStorage;
  using typename Base::TiledMma;
  using typename Base::TileShape;
  using Accumulators =
      decltype(cute::partition_fragment_C(TiledMma{}, cute::take<0, 2>(TileShape{})));

  // The longest K loop (in K tiles) this mainloop runs.
  static constexpr int kMaxKTiles = Base::DispatchPolicy::Stages / 2;

  // Called inside the kernel's turn: records what mma_tail needs and returns, so the
  // other warp group's turn begins at once.
  template <class FrgTensorC>
  CUTLASS_DEVICE void mma(MainloopPipeline /*pipeline*/, PipelineState /*smem_pipe_read*/,
                          FrgTensorC& accum, int k_tile_count, int thread_idx,
                          TensorStorage& shared_tensors, Params const& mainloop_params) {
    static_assert(std::is_same_v<FrgTensorC, Accumulators>,
                  "the kernel's accumulators are the tile's C fragment");
    accum_ = &accum;
    k_tile_count_ = k_tile_count;
    thread_idx_ = thread_idx;
    shared_tensors_ = &shared_tensors;
    params_ = &mainloop_params;
  }

  // Called after the kernel's turn: the K loop, then the last stage's release.
  CUTLASS_DEVICE void mma_tail(MainloopPipeline pipeline, PipelineState smem_pipe_read,
                               int k_tile_count) {
    Overlapped::mma(pipeline, smem_pipe_read, *accum_, k_tile_count_, thread_idx_, *shared_tensors_,
                    *params_);
    Base::mma_tail(pipeline, smem_pipe_read, k_tile_count);
  }

 private:
  Accumulators* accum_ = nullptr;
  int k_tile_count_ = 0;
  int thread_idx_ = 0;
  TensorStorage* shared_tensors_ = nullptr;
  Params const* params_ = nullptr;
};

}  // namespace gemmprof::kernels::cutlass_gemm
