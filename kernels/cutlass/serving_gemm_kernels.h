// The serving recipes' CUTLASS GEMMs (sm_90a), each instantiation in its own translation
// unit (serving_gemm_*.cu), behind the factories below; cutlass_gemm.h wraps them for the
// runner.
//  * int8-rowwise (W8A8): C[m, n] = a_scales[m] * bt_scales[n] * (A[m, k] * B^T[n, k]^T),
//    int8 x int8, exact INT32 accumulation, the two fp32 scales applied in the epilogue
//    (rule I2 of core/quant/integer_quant.h), BF16 out; A, B^T K-major, C row-major, as
//    RowwiseProblem of block_gemm_kernels.h says (groups back to back as one batch).
//  * w8a16 / w4a16 (weight-only): C[m, n] = A[m, k] * W'[n, k]^T with W' = q * s, q the
//    INT8 or INT4 weight and s its bf16 scale per row (w8a16: one group = K) and group of
//    `group` along K (w4a16), BF16 activations and out, fp32 accumulation. CUTLASS's
//    mixed-input mainloop converts the weight in registers, so the weight is the kernel's
//    first operand: the launch computes C^T = W' * A^T, with C^T column-major = C
//    row-major. The INT4 weight is read in CUTLASS's reordered layout (ReorderW4 writes
//    it, once, outside every timing): each thread's nibbles contiguous, the nibbles of
//    eight in the order 0,2,4,6,1,3,5,7 so they convert to BF16 in pairs.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/cutlass/block_gemm_kernels.h"

namespace gemmprof::kernels::cutlass_gemm {

// int8-rowwise, pingpong: tile 64x128x128 cluster 1x2x1 (decode-size M), tile
// 128x128x128 cluster 2x1x1 (the rest), and cooperative 128x256x128 (large M, where the
// INT8 tensor cores' rate needs the wider tile).
Made MakeInt8RowwiseTile64(const RowwiseProblem& problem, int device);
Made MakeInt8RowwiseTile128(const RowwiseProblem& problem, int device);
Made MakeInt8RowwiseCooperative256(const RowwiseProblem& problem, int device);

// A weight-only GEMM's operands (one group).
struct WeightOnlyProblem {
  int32_t m = 0, n = 0, k = 0;
  const void* a = nullptr;       // [m, k] BF16, row-major
  const void* w = nullptr;       // [n, k] INT8 row-major, or INT4 in ReorderW4's layout
  const void* scales = nullptr;  // BF16 [ceil(k / group), n]: n fastest (CUTLASS's layout)
  int32_t group = 0;             // K elements per scale (w8a16: k)
  void* c = nullptr;             // [m, n] BF16, row-major
};
// Cooperative, tile 128 weight rows x TileN tokens x 64 (K), cluster 1x1x1: TileN 16 for
// decode (a step's handful of tokens), 64 and 128 for larger M. The group must be a
// multiple of 64 or K itself.
Made MakeW4a16Tile16(const WeightOnlyProblem& problem, int device);
Made MakeW4a16Tile64(const WeightOnlyProblem& problem, int device);
Made MakeW4a16Tile128(const WeightOnlyProblem& problem, int device);
Made MakeW8a16Tile16(const WeightOnlyProblem& problem, int device);
Made MakeW8a16Tile64(const WeightOnlyProblem& problem, int device);
Made MakeW8a16Tile128(const WeightOnlyProblem& problem, int device);
// Tile 16 with the stream-K scheduler: K split across CTAs where N has fewer 128-row tiles
// than the device has SMs (decode's qkv, attn_out and mlp_down).
Made MakeW4a16Tile16StreamK(const WeightOnlyProblem& problem, int device);
Made MakeW8a16Tile16StreamK(const WeightOnlyProblem& problem, int device);
// Tiles 64 and 128 with the stream-K scheduler: the same where a few hundred tokens leave
// N's 128-row tiles times the token tiles short of the SMs (qkv, attn_out, mlp_down at
// M = 128), or a last wave of tiles part-empty.
Made MakeW4a16Tile64StreamK(const WeightOnlyProblem& problem, int device);
Made MakeW8a16Tile64StreamK(const WeightOnlyProblem& problem, int device);
Made MakeW4a16Tile128StreamK(const WeightOnlyProblem& problem, int device);
Made MakeW8a16Tile128StreamK(const WeightOnlyProblem& problem, int device);

// Rewrites `packed` (INT4 [n, k], row-major, two per byte, low nibble first: rule I4's
// packing; k even) into the layout the w4a16 kernels read, at `out` (n * k / 2 bytes, not
// overlapping `packed`), on `stream`.
cudaError_t ReorderW4(const void* packed, void* out, int32_t n, int32_t k, cudaStream_t stream);

}  // namespace gemmprof::kernels::cutlass_gemm
