// Consumer mainloops for CUTLASS's Hopper FP8 GEMMs that overlap each K block's promotion
// with the next K block's tensor-core MMAs: OverlappedBlockwiseMainloop for the
// blockwise-scaled GEMM (the batched, non-pointer-array collective), and
// OverlappedPromotionMainloop, at the end of this file, for the FP8 GEMM whose partial sums
// are promoted into fp32 without scales (fp8-rowwise's dgrad and wgrad: batched and
// pointer-array collectives).
//
// CUTLASS 4.2's collective issues a K block's WGMMAs into a partial accumulator, waits
// for all of them, multiplies the partial sums by that block's scales and adds them to
// the main accumulator, and only then issues the next block's WGMMAs: the tensor cores
// idle for every promotion (one FFMA per accumulator element with 1x128 x 128x128 scales,
// an FMUL and an FFMA with 1x128 x 1x128 ones). Here each warp group keeps two partial
// accumulators: block k+1's WGMMAs are issued into one while block k's partial sums in
// the other are promoted (warpgroup_wait<1>), and block k's stage is released once its
// scales have been read. That pays where the promotion is two operations per element
// (the wgrad of 512-token experts); on fprop and dgrad (one) the 128-wide tile rather
// than the promotion limits, and with one K block per tile there is nothing to overlap
// (docs/benchmarks.md, "Kernel forms").
//
// With 128x128 B^T scales (fprop, dgrad) the two or three scales a thread needs are read
// before the next block's WGMMAs are issued, not after the wait, so the promotion does
// not stall on those shared-memory reads. With 1x128 ones (wgrad: 34 scales a thread)
// every earlier placement, before or among the WGMMAs, measured slower, so those are
// read after the wait.
//
// Everything else (TMA and scale loads by the producer warp, shared-memory layouts, the
// pipeline, arguments, epilogue, tile scheduler) is the base collective's, unchanged: the
// kernel sees the base's DispatchPolicy and so runs the same schedule. Costs one more
// accumulator set of registers per thread (64 for a 64x128 warp-group tile).
#pragma once

#include "cute/tensor.hpp"
#include "cutlass/cutlass.h"
#include "cutlass/gemm/collective/collective_builder.hpp"

namespace gemmprof::kernels::cutlass_gemm {

// The WGMMA issue of a consumer thread, shared by the mainloops below: its warp group's
// slice of TiledMma over the stages of the shared-memory ring (A's and B's fragments are
// descriptors into every stage) and the function issue(part, stage), which issues one
// stage's WGMMAs (a whole K tile) into the accumulator fragment `part`, starting from zero,
// as one committed batch.
template <class TiledMma, class SmemLayoutA, class SmemLayoutB, class TensorStorage,
          class FrgTensorC>
CUTLASS_DEVICE auto MakeStageIssue(TensorStorage& shared_tensors, int thread_idx,
                                   FrgTensorC const& accum) {
  using namespace cute;
  Tensor sA = make_tensor(make_smem_ptr(shared_tensors.smem_A.data()), SmemLayoutA{});
  Tensor sB = make_tensor(make_smem_ptr(shared_tensors.smem_B.data()), SmemLayoutB{});
  constexpr int kWarpGroups = size(TiledMma{}) / cutlass::NumThreadsPerWarpGroup;
  const Layout warp_groups =
      make_layout(Int<kWarpGroups>{}, Int<cutlass::NumThreadsPerWarpGroup>{});
  const int warp_group = __shfl_sync(0xFFFFFFFF, thread_idx / cutlass::NumThreadsPerWarpGroup, 0);
  TiledMma tiled_mma;
  auto wg_mma = tiled_mma.get_slice(warp_groups(warp_group));
  Tensor tCrA = wg_mma.make_fragment_A(wg_mma.partition_A(sA));  // (MMA, MMA_M, MMA_K, stage)
  Tensor tCrB = wg_mma.make_fragment_B(wg_mma.partition_B(sB));  // (MMA, MMA_N, MMA_K, stage)
  CUTE_STATIC_ASSERT_V(size<1>(tCrA) == size<1>(accum));
  CUTE_STATIC_ASSERT_V(size<1>(tCrB) == size<2>(accum));
  return [tiled_mma, tCrA, tCrB](auto& part, int stage) mutable {
    tiled_mma.accumulate_ = GMMA::ScaleOut::Zero;
    warpgroup_fence_operand(part);
    warpgroup_arrive();
    CUTLASS_PRAGMA_UNROLL
    for (int k_block = 0; k_block < size<2>(tCrA); ++k_block) {
      cute::gemm(tiled_mma, tCrA(_, _, k_block, stage), tCrB(_, _, k_block, stage), part);
      tiled_mma.accumulate_ = GMMA::ScaleOut::One;
    }
    warpgroup_commit_batch();
    warpgroup_fence_operand(part);
  };
}

// The K loop both overlapped mainloops share, for a collective that keeps one K tile in
// flight (K_PIPE_MMAS 1). K tile 0 goes into part0; then a step per tile: issue it into one
// partial accumulator, promote the tile before from the other and release that tile's
// stage. Two steps a trip, so which accumulator receives and which is promoted stays known
// at compile time. The last stage is left to the base's mma_tail, which releases stage
// k_tile_count - 1. `issue(part, stage)` issues a stage's WGMMAs into `part`;
// `wait_and_promote(done, stage, issue_next, Int<pending>)` calls issue_next, waits until
// at most `pending` WGMMA batches are in flight and promotes `done` (the partial sums of
// `stage`).
template <class Pipeline, class State, class Part, class Issue, class WaitAndPromote>
CUTLASS_DEVICE void RunOverlappedPromotion(Pipeline& pipeline, State smem_pipe_read,
                                           int k_tile_count, Part& part0, Part& part1, Issue& issue,
                                           WaitAndPromote& wait_and_promote) {
  using cute::Int;
  if (k_tile_count <= 0) return;
  State read = smem_pipe_read;
  pipeline.consumer_wait(read);
  issue(part0, read.index());
  State held = read;
  ++read;
  auto step = [&](auto& next, auto& done) {
    pipeline.consumer_wait(read);
    wait_and_promote(
        done, held.index(), [&] { issue(next, read.index()); }, Int<1>{});
    pipeline.consumer_release(held);
    held = read;
    ++read;
  };
  int k = 1;
  for (; k + 1 < k_tile_count; k += 2) {
    step(part1, part0);
    step(part0, part1);
  }
  if (k < k_tile_count) {
    step(part1, part0);
    wait_and_promote(
        part1, held.index(), [] {}, Int<0>{});
  } else {
    wait_and_promote(
        part0, held.index(), [] {}, Int<0>{});
  }
}

// OneKTile: the form for GEMMs of one K tile per output tile (the wgrad of experts with at
// most 128 tokens; the host refuses longer K loops, the kernel does not check): the tile's
// WGMMAs go straight into the accumulator, which is then scaled in place as a promotion
// onto a cleared accumulator would (accum = 0 + partial * scales: the same fp32 operations
// and values), so no partial accumulator is needed and a warp group's tile may be 128x128.
// Those GEMMs write as many bytes as they read: the larger tile means fewer tile starts and
// stores per byte. (A form that went on to later K tiles 64 rows at a time, into one
// 64x128 partial, measured 13% slower on one K tile in the choice burst, for its
// registers, and won no two-K-tile item: docs/benchmarks.md, "Kernel forms".)
template <class Base, bool OneKTile = false>
struct OverlappedBlockwiseMainloop : Base {
  using typename Base::MainloopPipeline;
  using typename Base::Params;
  using typename Base::PipelineState;
  using typename Base::SmemLayoutA;
  using typename Base::SmemLayoutB;
  using typename Base::SmemLayoutSFA;
  using typename Base::SmemLayoutSFB;
  using typename Base::TensorStorage;
  using typename Base::TiledMma;
  using typename Base::TileShape;
  using Scale = typename Base::ElementBlockScale;

  static constexpr int kScaleRowsPerTile = Base::ScaleMsPerTile;
  static constexpr int kScaleColsPerTile = Base::ScaleNsPerTile;
  // One promotion per K tile: the tile is one 128-wide scale block.
  static_assert(Base::ScaleGranularityK == cute::size<2>(TileShape{}),
                "the overlapped mainloop promotes once per K tile: tile K must be the scale "
                "block");

  template <class FrgTensorC>
  CUTLASS_DEVICE void mma(MainloopPipeline pipeline, PipelineState smem_pipe_read,
                          FrgTensorC& accum, int k_tile_count, int thread_idx,
                          TensorStorage& shared_tensors, Params const& /*mainloop_params*/) {
    using namespace cute;
    static_assert(is_rmem<FrgTensorC>::value, "the accumulator must be in registers");

    // The scales of each stage seen with the accumulator's (M, N) shape: A's scales vary
    // along M and are broadcast along N, B^T's the other way; the third mode is
    // (scale block along K, stage).
    Tensor sSFA = make_tensor(
        make_smem_ptr(shared_tensors.smem_SFA.data()),
        make_layout(
            make_shape(get<0>(shape(SmemLayoutSFA{})), get<1>(TileShape{}),
                       make_shape(get<1>(shape(SmemLayoutSFA{})), get<2>(shape(SmemLayoutSFA{})))),
            make_stride(
                get<0>(stride(SmemLayoutSFA{})), _0{},
                make_stride(get<1>(stride(SmemLayoutSFA{})), get<2>(stride(SmemLayoutSFA{}))))));
    Tensor sSFB = make_tensor(
        make_smem_ptr(shared_tensors.smem_SFB.data()),
        make_layout(
            make_shape(get<0>(TileShape{}), get<0>(shape(SmemLayoutSFB{})),
                       make_shape(get<1>(shape(SmemLayoutSFB{})), get<2>(shape(SmemLayoutSFB{})))),
            make_stride(
                _0{}, get<0>(stride(SmemLayoutSFB{})),
                make_stride(get<1>(stride(SmemLayoutSFB{})), get<2>(stride(SmemLayoutSFB{}))))));

    auto thread_c = TiledMma{}.get_slice(thread_idx);
    Tensor tCsSFA = thread_c.partition_C(sSFA);  // (MMA, MMA_M, MMA_N, (K block, stage))
    Tensor tCsSFB = thread_c.partition_C(sSFB);
    auto issue =
        MakeStageIssue<TiledMma, SmemLayoutA, SmemLayoutB>(shared_tensors, thread_idx, accum);
    // A stage's scales in registers, seen with the accumulator's shape; where one side
    // has a single scale per tile it is folded into the other's.
    auto load_scales = [&](int stage) {
      Tensor sfa = make_tensor_like<Scale>(tCsSFA(_, _, _, _0{}));
      Tensor sfb = make_tensor_like<Scale>(tCsSFB(_, _, _, _0{}));
      copy(tCsSFA(_, _, _, make_coord(_0{}, stage)), sfa);
      copy(tCsSFB(_, _, _, make_coord(_0{}, stage)), sfb);
      if constexpr (kScaleRowsPerTile > 1 && kScaleColsPerTile == 1) {
        const Scale b = sfb(_0{});
        CUTLASS_PRAGMA_UNROLL
        for (int i = 0; i < size(filter_zeros(sfa)); ++i) filter_zeros(sfa)(i) *= b;
      } else if constexpr (kScaleRowsPerTile == 1 && kScaleColsPerTile > 1) {
        const Scale a = sfa(_0{});
        CUTLASS_PRAGMA_UNROLL
        for (int i = 0; i < size(filter_zeros(sfb)); ++i) filter_zeros(sfb)(i) *= a;
      } else if constexpr (kScaleRowsPerTile == 1 && kScaleColsPerTile == 1) {
        sfa(_0{}) *= sfb(_0{});
      }
      return cute::make_tuple(sfa, sfb);
    };
    // dst = addend + part * (the A scale of the row) * (the B^T scale of the column), element
    // by element (dst, part and the scales seen with one shape); addend(i): dst(i) (a
    // promotion), or 0 (the one-K-tile form, where part is dst).
    auto promote_into = [&](auto& dst, auto& part, auto const& sfa, auto const& sfb, auto addend) {
      warpgroup_fence_operand(part);
      warpgroup_fence_operand(dst);
      if constexpr (kScaleRowsPerTile > 1 && kScaleColsPerTile > 1) {
        CUTLASS_PRAGMA_UNROLL
        for (int i = 0; i < size(dst); ++i) dst(i) = addend(i) + part(i) * sfa(i) * sfb(i);
      } else if constexpr (kScaleRowsPerTile > 1) {
        CUTLASS_PRAGMA_UNROLL
        for (int i = 0; i < size(dst); ++i) dst(i) = addend(i) + part(i) * sfa(i);
      } else if constexpr (kScaleColsPerTile > 1) {
        CUTLASS_PRAGMA_UNROLL
        for (int i = 0; i < size(dst); ++i) dst(i) = addend(i) + part(i) * sfb(i);
      } else {
        const Scale ab = sfa(_0{});
        CUTLASS_PRAGMA_UNROLL
        for (int i = 0; i < size(dst); ++i) dst(i) = addend(i) + part(i) * ab;
      }
      warpgroup_fence_operand(dst);
    };
    // accum += part * the stage's scales.
    auto promote = [&](auto& part, auto const& scales) {
      promote_into(accum, part, get<0>(scales), get<1>(scales), [&](int i) { return accum(i); });
    };

    if constexpr (OneKTile) {
      // The base's mma_tail releases the stage.
      if (k_tile_count <= 0) return;
      pipeline.consumer_wait(smem_pipe_read);
      const int stage = smem_pipe_read.index();
      issue(accum, stage);
      auto scales = load_scales(stage);
      warpgroup_wait<0>();
      promote_into(accum, accum, get<0>(scales), get<1>(scales), [](int) { return 0.0f; });
      return;
    }

    // Two partial accumulators: one receives a block's WGMMAs while the other, holding
    // the block before, is promoted.
    Tensor part0 = make_fragment_like(accum);
    Tensor part1 = make_fragment_like(accum);
    clear(accum);
    warpgroup_fence_operand(accum);
    // Wait for the partial sums of `stage` (all but `pending` WGMMA batches retired) and
    // promote them. With a single scale per tile on one side a thread needs two or three
    // scales: they are read before the next block's WGMMAs are issued (`issue_next`), so
    // the promotion does not wait on shared memory. With a scale per row and per column
    // (1x128 B^T scales, wgrad) a thread needs 34, and reading them early measured slower
    // (the top of this file); they are read after the wait.
    auto wait_and_promote = [&](auto& done, int stage, auto issue_next, auto pending) {
      if constexpr (kScaleRowsPerTile == 1 || kScaleColsPerTile == 1) {
        auto scales = load_scales(stage);
        issue_next();
        warpgroup_wait<decltype(pending)::value>();
        promote(done, scales);
      } else {
        issue_next();
        warpgroup_wait<decltype(pending)::value>();
        promote(done, load_scales(stage));
      }
    };

    RunOverlappedPromotion(pipeline, smem_pipe_read, k_tile_count, part0, part1, issue,
                           wait_and_promote);
  }
};

template <class Base>
using OneKTileBlockwiseMainloop = OverlappedBlockwiseMainloop<Base, true>;

// CUTLASS 4.2's FP8 mainloop without fast accumulation (the batched and pointer-array
// collectives, MainloopSm90{,Array}TmaGmmaWarpSpecializedFP8) issues a K block's WGMMAs
// into a partial accumulator and, at each promotion (every 4 WGMMA K steps by default: one
// 128-wide K tile), waits for all of them before adding the partial sums to the fp32
// accumulator, so the tensor cores idle for every promotion and the next tile's issue.
// Here, as in OverlappedBlockwiseMainloop, each warp group keeps two partial accumulators:
// tile k+1's WGMMAs are issued into one while tile k's partial sums in the other are added
// (warpgroup_wait<1>). The arithmetic is the base's: the fp32 accumulator receives each K
// tile's partial sums in K order, so the sums are the same; only the waiting changes. The
// promotion interval is fixed at one K tile, the base's default, which the GEMMs here never
// change (the runtime argument mma_promotion_interval is not read). Costs one more
// accumulator set of registers per thread.
template <class Base>
struct OverlappedPromotionMainloop : Base {
  using typename Base::MainloopPipeline;
  using typename Base::Params;
  using typename Base::PipelineState;
  using typename Base::SmemLayoutA;
  using typename Base::SmemLayoutB;
  using typename Base::TensorStorage;
  using typename Base::TiledMma;
  using typename Base::TileShape;
  static_assert(Base::K_PIPE_MMAS == 1,
                "the overlapped K loop leaves one stage to the base's mma_tail");

  template <class FrgTensorC>
  CUTLASS_DEVICE void mma(MainloopPipeline pipeline, PipelineState smem_pipe_read,
                          FrgTensorC& accum, int k_tile_count, int thread_idx,
                          TensorStorage& shared_tensors, Params const& /*mainloop_params*/) {
    using namespace cute;
    static_assert(is_rmem<FrgTensorC>::value, "the accumulator must be in registers");
    // CUTLASS's default promotion interval, 4 WGMMA K steps, is one K tile here.
    static_assert(size<2>(TileShape{}) == 4 * size<2>(typename TiledMma::AtomShape_MNK{}),
                  "the overlapped K loop promotes once per K tile of 4 WGMMA K steps");
    auto issue =
        MakeStageIssue<TiledMma, SmemLayoutA, SmemLayoutB>(shared_tensors, thread_idx, accum);

    Tensor part0 = make_fragment_like(accum);
    Tensor part1 = make_fragment_like(accum);
    clear(accum);
    warpgroup_fence_operand(accum);

    auto wait_and_promote = [&](auto& done, int /*stage*/, auto issue_next, auto pending) {
      issue_next();
      warpgroup_wait<decltype(pending)::value>();
      warpgroup_fence_operand(done);
      warpgroup_fence_operand(accum);
      CUTLASS_PRAGMA_UNROLL
      for (int i = 0; i < size(accum); ++i) accum(i) += done(i);
      warpgroup_fence_operand(accum);
    };
    RunOverlappedPromotion(pipeline, smem_pipe_read, k_tile_count, part0, part1, issue,
                           wait_and_promote);
  }
};

}  // namespace gemmprof::kernels::cutlass_gemm
