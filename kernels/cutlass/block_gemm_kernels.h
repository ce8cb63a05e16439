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
//    epilogue overlapping the other's MMAs. Measured on an H100 it wins wgrad's short K
//    loops (K: one expert's tokens) by 2-6% and small GEMMs (more tiles for the SMs),
//    and loses 15-60% on long-K fprop/dgrad; the grouped pingpong form won no item of
//    Qwen3 or DeepSeek-V3 experts and is not instantiated.
Made MakeBlk128Grouped(const std::vector<Group>& groups, int device);
Made MakeVec128Grouped(const std::vector<Group>& groups, int device);
Made MakeBlk128Batched(const Group& first, int groups, int device);
Made MakeVec128Batched(const Group& first, int groups, int device);
Made MakeBlk128BatchedPingpong(const Group& first, int groups, int device);
Made MakeVec128BatchedPingpong(const Group& first, int groups, int device);
//  * Overlapped (batched only): each K block's scale promotion overlapped with the next
//    K block's MMAs (overlapped_mainloop.cuh: two partial accumulators per warp group),
//    cooperative (tile 128x128x128) for 128x128 B^T scales only, pingpong (tile
//    64x128x128) for both. On an H100 Qwen3's 512-token experts keep cooperative on
//    fprop and dgrad and pingpong on wgrad (9-12% ahead of batched pingpong);
//    DeepSeek-V3's 128-token experts keep pingpong on fprop and dgrad (up to 3.5% ahead
//    in the item's figure). The cooperative form for 1x128 scales was measured too and
//    not kept: its short choice bursts read up to 27% faster than its item rounds on
//    DeepSeek-V3's wgrad (chosen once, it made the item 21% slower), and no item it won
//    ran faster for it. No cluster (1x1x1): on an H100 that ran every Qwen3 expert item
//    0.3-3.7% faster than cluster 1x2 in the same interleaved rounds; 2x1 and 2x2 were
//    no faster than 1x2. The pingpong form for 1x128 scales (wgrad) stores its whole
//    64x128 tile in one epilogue step (3-7% on Qwen3's wgrad against CUTLASS's 64x32
//    pieces); with the others, wider pieces won as often as they lost, and storing
//    straight from registers (no shared memory) was 16-26% slower on wgrad. The
//    pingpong form for 128x128 scales stores its whole tile too, each warp group from a
//    buffer of its own, waiting for a store only before the group's next epilogue
//    (deferred_store_epilogue.cuh): 1.2-4.9% ahead of CUTLASS's epilogue on DeepSeek-V3's
//    fprop and dgrad items in three H100 calls, up to 7% behind on Qwen3's (which keep
//    the cooperative form). The same epilogue on the 1x128 form was 3-4% slower on Qwen3's
//    wgrad, and on the cooperative form up to 10%; wider tiles for 1x128 scales (128x160,
//    128x192, 64x192) and clusters 2x1 and 2x2 lost on wgrad too. One accumulator per warp
//    group, rescaled between K blocks (room for 128x256 and 64x256 tiles with 128x128
//    scales), won up to 2% on three of Qwen3's fprop and dgrad items and lost DeepSeek-V3's:
//    not instantiated.
Made MakeBlk128BatchedOverlapped(const Group& first, int groups, int device);
Made MakeBlk128BatchedOverlappedPingpong(const Group& first, int groups, int device);
Made MakeVec128BatchedOverlappedPingpong(const Group& first, int groups, int device);
//  * Concurrent (batched pingpong, 1x128 B^T scales only): the overlapped pingpong form
//    with the two warp groups' K loops running at the same time rather than in turns
//    where a tile's K loop fits half the stages (concurrent_mainloop.cuh; wgrad's short
//    ones, up to K 512; longer ones are refused). The epilogues still take turns. On an
//    H100 it ran Qwen3's two wgrad items (K 512) 1.2-3.1% faster than the overlapped
//    pingpong form in the items' own rounds of five runs (equal in the choice burst).
//    The fprop and dgrad of experts have longer K loops (the hidden or intermediate
//    size), so no form for 128x128 scales is instantiated.
Made MakeVec128BatchedConcurrentPingpong(const Group& first, int groups, int device);
//  * Sm100 (block_gemm_sm100_grouped.cu, built for sm_100a only): the grouped form on
//    Blackwell, CUTLASS's sm100 pointer-array blockwise collective (UMMA, one SM per tile,
//    tile 128x128x128, cluster 1x1x1), the same operands and scales. No Blackwell GPU has
//    run it; cutlass_gemm.cc offers it on sm_100 only.
Made MakeSm100Blk128Grouped(const std::vector<Group>& groups, int device);
Made MakeSm100Vec128Grouped(const std::vector<Group>& groups, int device);

// fp8-rowwise: C[m, n] = a_scales[m] * bt_scales[n] * (A[m, k] * B^T[n, k]^T), e4m3 x
// e4m3 with FP8 fast accumulation (fprop's setting), BF16 out, the scales applied in the
// epilogue; A, B^T K-major and C row-major as above; scales fp32, one per row of A and
// one per row of B^T (the row-wise quantizer's scale_inv vectors). One GEMM (no groups).
struct RowwiseProblem {
  int32_t m = 0, n = 0, k = 0;
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
// gives a few 64-row tiles); Tile128: tile 128x128x128, cluster 2x1x1, for the rest. A
// cooperative 128x128 form was measured on an H100 against cuBLASLt and the 64x128 form
// and won no Llama-3.1-8B or seed 5B item, so it is not instantiated.
Made MakeRowwiseTile64(const RowwiseProblem& problem, int device);
Made MakeRowwiseTile128(const RowwiseProblem& problem, int device);

}  // namespace gemmprof::kernels::cutlass_gemm
