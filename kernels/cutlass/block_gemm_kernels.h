// The CUTLASS grouped FP8 block-scaled GEMMs this build instantiates, behind a plain
// interface free of CUTLASS, CuTe and Abseil headers (the .cu files that instantiate
// them compile only for sm_90a, block_gemm_sm100_grouped.cu only for sm_100a;
// cutlass_gemm.h wraps them for the runner).
//
// Every group g computes C_g[m, n] = dequant(A_g)[m, k] * dequant(B^T_g)[n, k]^T in fp32
// with the block scales applied as the K loop crosses each 128-wide block (promotion),
// written as BF16. Operands are K-major as the runner stores them: A_g [m, k], B^T_g
// [n, k], C_g [m, n] row-major. Scales are the dequantization factors as the project's
// block-quantization kernels write them, row-major and compact (CUTLASS derives their
// layout from the problem size; cuBLASLt's padded layouts would be misread):
//  * 1x128 (activations, gradients): [rows, ceil(k/128)], one per row and K block;
//  * 128x128 (weights): [ceil(rows/128), ceil(k/128)].
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace gemmprof::kernels::cutlass_gemm {

struct Group {
  int32_t m = 0, n = 0, k = 0;       // m may be 0 (an expert that got no tokens)
  const void* a = nullptr;           // [m, k] FP8
  const void* bt = nullptr;          // [n, k] FP8
  void* c = nullptr;                 // [m, n] BF16
  const float* a_scales = nullptr;   // 1x128, see above
  const float* bt_scales = nullptr;  // 128x128 or 1x128 by instantiation
};

// A grouped GEMM prepared for a fixed list of groups: its argument arrays on the device,
// its workspace, the kernel initialized. Run is graph-capturable and may be called any
// number of times; the groups' buffers must stay where they were.
class Instance {
 public:
  virtual ~Instance() = default;
  virtual cudaError_t Run(cudaStream_t stream) = 0;
  // "tile 128x128x128, cluster 1x2x1, cooperative, 4 stages".
  virtual std::string Config() const = 0;
};

// What a factory returns: an instance, or why not (`unsupported`: CUTLASS cannot
// implement these groups, e.g. alignment; otherwise a CUDA failure).
struct Made {
  std::unique_ptr<Instance> instance;
  std::string error;
  bool unsupported = false;
};

// The instantiations (one translation unit each), all e4m3 x e4m3 (fp8-block quantizes
// every operand to E4M3), named by B^T's scale blocks (Blk128: a weight's 128x128, for
// fprop and dgrad; Vec128: dY^T's 1x128, for wgrad), by form and by schedule; cluster
// 1x2x1 (the overlapped forms: none). `device` is the CUDA ordinal it runs on.
//  * Grouped: any sizes per group (pointer arrays; TMA descriptors updated per group).
//  * Batched: `groups` groups of `first`'s size stored back to back from `first`'s
//    pointers (A at g * m * k, B^T at g * n * k, C at g * m * n, scales at g times one
//    group's scale tensor): one batched GEMM.
//  * Cooperative (no suffix): tile 128x128x128, both consumer warp groups on one tile.
//  * Pingpong (batched only): tile 64x128x128, the warp groups alternate tiles, one's
//    epilogue overlapping the other's MMAs: that pays where a tile's K loop is short
//    (wgrad, K: one expert's tokens) and in small GEMMs (more tiles for the SMs), not on
//    long-K fprop/dgrad. A grouped pingpong form won no expert item and is not
//    instantiated (docs/benchmarks.md, "Kernel forms", has the figures of every form).
Made MakeBlk128Grouped(const std::vector<Group>& groups, int device);
Made MakeVec128Grouped(const std::vector<Group>& groups, int device);
Made MakeBlk128Batched(const Group& first, int groups, int device);
Made MakeVec128Batched(const Group& first, int groups, int device);
Made MakeBlk128BatchedPingpong(const Group& first, int groups, int device);
Made MakeVec128BatchedPingpong(const Group& first, int groups, int device);
//  * Overlapped (batched only): each K block's scale promotion overlapped with the next
//    K block's MMAs (overlapped_mainloop.cuh: two partial accumulators per warp group),
//    cooperative (tile 128x128x128) for 128x128 B^T scales only, pingpong (tile
//    64x128x128) for both; which one an item keeps depends on its experts' token count
//    (the per-item choice times them all). No cluster (1x1x1): on the expert GEMMs,
//    pairing CTAs costs more than the operand multicast saves. The pingpong form for
//    1x128 scales (wgrad) stores its whole 64x128 tile in one epilogue step, since
//    wgrad's short K loops make the epilogue as long as the mainloop. The pingpong form
//    for 128x128 scales stores its whole tile too, each warp group from a buffer of its
//    own, waiting for a store only before the group's next epilogue
//    (deferred_store_epilogue.cuh), which pays on 128-token experts' fprop and dgrad. Not
//    instantiated: a cooperative form for 1x128 scales (a short choice burst ranked it
//    ahead where the item then ran slower), other epilogue pieces, register stores,
//    wider tiles, larger clusters and one accumulator rescaled between K blocks (room
//    for 64x256 warp-group tiles), none of which made an item faster for its cost.
Made MakeBlk128BatchedOverlapped(const Group& first, int groups, int device);
Made MakeBlk128BatchedOverlappedPingpong(const Group& first, int groups, int device);
Made MakeVec128BatchedOverlappedPingpong(const Group& first, int groups, int device);
//  * Concurrent (batched pingpong, 1x128 B^T scales only): the overlapped pingpong form
//    with the two warp groups' K loops running at the same time rather than in turns
//    where a tile's K loop fits half the stages (concurrent_mainloop.cuh; wgrad's short
//    ones, up to K 512; longer ones are refused). The epilogues still take turns. It
//    reads the same as the overlapped pingpong form in a short burst and faster under
//    the power cap, so the two are decided in the item's own rounds. The fprop and dgrad
//    of experts have longer K loops (the hidden or intermediate size), so no form for
//    128x128 scales is instantiated.
Made MakeVec128BatchedConcurrentPingpong(const Group& first, int groups, int device);
//  * Sm100 (block_gemm_sm100_grouped.cu, built for sm_100a only): the grouped form on
//    Blackwell, CUTLASS's sm100 pointer-array blockwise collective (UMMA, one SM per tile,
//    tile 128x128x128, cluster 1x1x1), the same operands and scales. No Blackwell GPU has
//    run it; cutlass_gemm.cc offers it on sm_100 only.
Made MakeSm100Blk128Grouped(const std::vector<Group>& groups, int device);
Made MakeSm100Vec128Grouped(const std::vector<Group>& groups, int device);

// fp8-rowwise: C[m, n] = a_scales[m] * bt_scales[n] * (A[m, k] * B^T[n, k]^T), e4m3 x
// e4m3, BF16 out, the scales applied in the epilogue; A, B^T K-major and C row-major as
// above; scales fp32, one per row of A and one per row of B^T (the row-wise quantizer's
// scale_inv vectors). `groups` GEMMs of one size (MoE experts) stored back to back run
// as one batch: A [groups, m, k], B^T [groups, n, k], C [groups, m, n], a_scales
// [groups * m], bt_scales [groups * n].
struct RowwiseProblem {
  int32_t m = 0, n = 0, k = 0;
  int32_t groups = 1;
  const void* a = nullptr;
  const void* bt = nullptr;
  void* c = nullptr;
  const float* a_scales = nullptr;
  const float* bt_scales = nullptr;
  // The persistent tile scheduler's swizzle width in tiles (1, 2, 4 or 8): consecutive
  // CTAs take tiles in bands that wide, so a big problem reuses operand tiles in L2.
  int swizzle = 1;
};
// Both pingpong (each consumer warp group its own tile, one's epilogue overlapping the
// other's MMAs). Tile64: tile 64x128x128, cluster 1x2x1, for small M (decode: M <= 128
// gives a few 64-row tiles); Tile128: tile 128x128x128, cluster 2x1x1, for the rest. The
// plain forms use FP8 fast accumulation (fprop's setting); the Split forms promote the FP8
// MMAs' partial sums into fp32 once per 128-wide K tile (dgrad's and wgrad's setting):
// Tile64Split, CooperativeSplit and GroupedSplit with overlapped_mainloop.cuh's consumer
// mainloop (each tile's promotion overlapped with the next tile's MMAs), the 128-row
// pingpong Split forms with CUTLASS's FP8 mainloop, which waits for its MMAs at every
// promotion (the overlap's third accumulator set does not fit their registers).
Made MakeRowwiseTile64(const RowwiseProblem& problem, int device);
Made MakeRowwiseTile128(const RowwiseProblem& problem, int device);
Made MakeRowwiseTile64Split(const RowwiseProblem& problem, int device);
Made MakeRowwiseTile128Split(const RowwiseProblem& problem, int device);
// Tile 128x128x128 with cluster 1x2x1 (Tile128N: pingpong; Cooperative: both consumer
// warp groups on one tile): experts of one 128-row tile, whose 2x1 cluster would leave
// half its CTAs idle.
Made MakeRowwiseTile128N(const RowwiseProblem& problem, int device);
Made MakeRowwiseTile128NSplit(const RowwiseProblem& problem, int device);
Made MakeRowwiseCooperative(const RowwiseProblem& problem, int device);
Made MakeRowwiseCooperativeSplit(const RowwiseProblem& problem, int device);
// Without a cluster (Solo; fp8-block's batched forms measured faster without one): the
// cooperative forms, and Tile128 (FP8 fast accumulation only: the 128-row pingpong Split
// forms wait at every promotion, above).
Made MakeRowwiseCooperativeSolo(const RowwiseProblem& problem, int device);
Made MakeRowwiseCooperativeSplitSolo(const RowwiseProblem& problem, int device);
Made MakeRowwiseTile128Solo(const RowwiseProblem& problem, int device);
// Promoted (Split only, batched): fp8-block's batched overlapped pingpong form for 1x128
// scales (tile 64x128x128, no cluster, the whole tile stored at once) and its concurrent
// form (K up to 512), reading the row-wise scale vectors as 1x128 scales equal along K:
// each K tile's promotion multiplies its partial sums by a_scales[m] * bt_scales[n] and the
// epilogue is a plain store (the Split forms above apply the scales in the epilogue; these
// sum the same products in another fp32 rounding order). For wgrad, whose short K loops
// make the epilogue most of a tile's work.
Made MakeRowwisePromotedPingpong(const RowwiseProblem& problem, int device);
Made MakeRowwisePromotedConcurrent(const RowwiseProblem& problem, int device);
// OneKTile (Split only, batched, K <= 128): the same scales at promotion where each output
// tile has a single K tile, whose WGMMAs then go straight into the accumulator (no partial
// accumulator: overlapped_mainloop.cuh, OneKTile), so a warp group's tile is 128x128:
// pingpong tile 128x128x128 stored 64x128 at a time, or cooperative tile 256x128x128. For
// the wgrad of experts of at most 128 tokens, which writes as many bytes as it reads.
Made MakeRowwiseOneKTilePingpong(const RowwiseProblem& problem, int device);
Made MakeRowwiseOneKTileCooperative(const RowwiseProblem& problem, int device);
// Grouped row-wise: any size per group (an expert's rows as routing gave them; m may be
// 0), pointer arrays per group, each group's scales by pointer (Group::a_scales [m],
// bt_scales [n]); pingpong, tile 64x128x128, cluster 1x2x1 (experts' row counts are
// small and uneven: 64-row tiles waste least).
Made MakeRowwiseGrouped(const std::vector<Group>& groups, int device);
Made MakeRowwiseGroupedSplit(const std::vector<Group>& groups, int device);
// The grouped row-wise form for Blackwell (rowwise_gemm_sm100_grouped.cu, sm_100a only):
// CUTLASS's sm100 pointer-array collective (UMMA, one SM per tile, tile 128x128x128),
// fp32 accumulation in tensor memory (no fast/split distinction), the same epilogue. No
// Blackwell GPU has run it; cutlass_gemm.cc offers it on sm_100 only.
Made MakeSm100RowwiseGrouped(const std::vector<Group>& groups, int device);

}  // namespace gemmprof::kernels::cutlass_gemm
