// An epilogue for the batched block-scaled GEMMs that does not wait, at the end of a tile,
// for its TMA store to finish reading shared memory. CUTLASS's Hopper TMA epilogue ends
// every tile with that wait (store_tail), and in the pingpong schedule the other warp
// group's epilogue may not start before it ends, since both store from the same buffers.
// Here the wait moves to the start of the warp group's next epilogue (by then its store
// has drained behind its next mainloop), and with two buffers per epilogue piece each
// pingpong warp group stores from buffers of its own, so one group's store overlaps the
// other's epilogue. That pays in the pingpong form for 128x128 scales (the fprop and
// dgrad of 128-token experts) and not in the wgrad (1x128) or cooperative forms, so only
// that form uses it (docs/benchmarks.md, "Kernel forms").
//
// For CUTLASS's Sm90TmaWarpSpecialized epilogue without a source operand; the rest of that
// collective is CUTLASS's own.
#pragma once

#include "cute/arch/copy_sm90_tma.hpp"
#include "cutlass/arch/barrier.h"
#include "cutlass/epilogue/collective/collective_builder.hpp"

namespace gemmprof::kernels::cutlass_gemm {

// `Epilogue` (a CollectiveEpilogue of the Sm90TmaWarpSpecialized dispatch policy, as
// CUTLASS's builder makes it) with `StagesD` shared-memory buffers for D.
template <class Epilogue, int StagesD>
struct WithStoreStages;
template <int StagesC, int OldStagesD, int FragmentSize, bool ReuseSmemC, bool DelayTmaStore,
          class Tile, class EpilogueTile, class ElementC, class StrideC, class ElementD,
          class StrideD, class Operation, class CallbackTile, class CallbackEpilogueTile,
          class... CallbackRest, class... Rest, int StagesD>
struct WithStoreStages<cutlass::epilogue::collective::CollectiveEpilogue<
                           cutlass::epilogue::Sm90TmaWarpSpecialized<
                               StagesC, OldStagesD, FragmentSize, ReuseSmemC, DelayTmaStore>,
                           Tile, EpilogueTile, ElementC, StrideC, ElementD, StrideD,
                           cutlass::epilogue::fusion::FusionCallbacks<
                               cutlass::epilogue::Sm90TmaWarpSpecialized<
                                   StagesC, OldStagesD, FragmentSize, ReuseSmemC, DelayTmaStore>,
                               Operation, CallbackTile, CallbackEpilogueTile, CallbackRest...>,
                           Rest...>,
                       StagesD> {
  using Policy = cutlass::epilogue::Sm90TmaWarpSpecialized<StagesC, StagesD, FragmentSize,
                                                           ReuseSmemC, DelayTmaStore>;
  using type = cutlass::epilogue::collective::CollectiveEpilogue<
      Policy, Tile, EpilogueTile, ElementC, StrideC, ElementD, StrideD,
      cutlass::epilogue::fusion::FusionCallbacks<Policy, Operation, CallbackTile,
                                                 CallbackEpilogueTile, CallbackRest...>,
      Rest...>;
};

template <class Base>
class DeferredStoreWaitEpilogue : public Base {
 public:
  static_assert(cute::is_void_v<typename Base::ElementC>,
                "the deferred wait is written for an epilogue without a source operand");
  using Base::Base;

  // The last tile's store may still be reading shared memory: wait before the CTA ends.
  CUTLASS_DEVICE ~DeferredStoreWaitEpilogue() { cute::tma_store_wait<0>(); }

  template <class ProblemShapeMNKL, class TileShapeMNK, class TileCoordMNKL, class AccEngine,
            class AccLayout, class TiledMma>
  CUTLASS_DEVICE auto store(typename Base::LoadPipeline load_pipeline,
                            typename Base::LoadPipelineState load_pipe_consumer_state,
                            typename Base::StorePipeline store_pipeline,
                            typename Base::StorePipelineState store_pipe_producer_state,
                            ProblemShapeMNKL problem_shape_mnkl, TileShapeMNK tile_shape_MNK,
                            TileCoordMNKL tile_coord_mnkl,
                            cute::Tensor<AccEngine, AccLayout> accumulators, TiledMma tiled_mma,
                            int thread_idx, typename Base::TensorStorage& shared_tensors,
                            int subtile_idx = -1) {
    // The warp that issued this warp group's previous stores (CUTLASS's: the first)
    // waits for them to leave shared memory; then the group may write its buffers.
    if (thread_idx / cutlass::NumThreadsPerWarp == 0) cute::tma_store_wait<0>();
    cutlass::arch::NamedBarrier::sync(cute::size(TiledMma{}),
                                      cutlass::arch::ReservedNamedBarriers::EpilogueBarrier);
    return Base::store(load_pipeline, load_pipe_consumer_state, store_pipeline,
                       store_pipe_producer_state, problem_shape_mnkl, tile_shape_MNK,
                       tile_coord_mnkl, accumulators, tiled_mma, thread_idx, shared_tensors,
                       subtile_idx);
  }

  // No wait here (see store).
  CUTLASS_DEVICE auto store_tail(typename Base::LoadPipeline,
                                 typename Base::LoadPipelineState load_pipe_consumer_state,
                                 typename Base::StorePipeline,
                                 typename Base::StorePipelineState store_pipe_producer_state) {
    return cute::make_tuple(load_pipe_consumer_state, store_pipe_producer_state);
  }
};

// For a pingpong kernel: `Built` (as CUTLASS's builder makes it) with the deferred wait and
// two buffers per epilogue piece of a tile, so each warp group stores from buffers of its own.
template <class Built>
using PingpongDeferredStoreEpilogue = DeferredStoreWaitEpilogue<typename WithStoreStages<
    Built, 2 * Built::get_store_pipe_increment(typename Built::CtaTileMNK{})>::type>;

}  // namespace gemmprof::kernels::cutlass_gemm
