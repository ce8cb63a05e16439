// One kernel family for every FP8 quantization that works on 128x128 tiles in a single
// pass over the input: per-tensor cast (+transpose, +fused amax), fp8-block 1x128 and
// 128x128 (+transpose), MXFP8 1x32 (+transpose). A block loads its tile into registers
// with 16-byte loads, reduces the amaxes its scaling needs (row segments with warp
// shuffles, columns and whole tiles through shared memory), casts, stores the row-major
// output with 16-byte stores and the transposed output through a swizzled shared tile.
#pragma once

#include <cstdint>
#include <type_traits>

#include "kernels/quant/device_numerics.cuh"
#include "kernels/quant/tile_io.cuh"

namespace gemmprof::kernels::detail {

enum class TileScaling {
  kTensor,        // one scale from device memory (current / delayed scaling)
  kBlock1x128,    // fp8-block activations: one scale per row per 128 columns
  kBlock128x128,  // fp8-block weights: one scale per tile
  kMx1x32,        // MXFP8: one UE8M0 per row per 32 columns
};

struct TileParams {
  const uint16_t* x = nullptr;  // BF16 bits, [rows, cols]
  int64_t rows = 0, cols = 0;
  Fp8Format format = Fp8Format::kE4M3;
  bool vec_ok = false;  // sizes and pointers allow 16-byte accesses
  bool pow2 = true;     // fp8-block: power-of-two scales
  const float* tensor_scale = nullptr;
  float* amax_out = nullptr;  // kTensor: fused amax (atomic max into it; 0 before the launch)
  uint8_t* out = nullptr;
  uint8_t* out_t = nullptr;  // null: no transposed output
  float* scale_inv = nullptr;
  float* scale_inv_t = nullptr;
  uint8_t* mx_scales = nullptr;    // row-major [rows, ceil(cols/32)], nullable
  uint8_t* mx_scales_t = nullptr;  // of x^T, nullable
  // MXFP8: the scales in cuBLASLt's 128x4 tiled swizzle (SwizzleBlockScales' layout),
  // nullable each. A 128x128 data tile's scales are exactly one 512-byte swizzle tile
  // (128 rows x 4 scale columns; x^T's likewise), written whole from shared memory, zero
  // padding included (rows and columns past the end have amax 0, scale byte 0).
  uint8_t* mx_swizzled = nullptr;
  uint8_t* mx_swizzled_t = nullptr;
  // fp8-block: the scales in cuBLASLt's layout as well as (or instead of) the row-major
  // grids above, each nullable. 1x128: VEC128 [ceil(cols/128)][gemm_stride], one K block's
  // rows contiguous; 128x128: BLK128 [ceil(rows/128)][gemm_stride], K blocks contiguous.
  // The padding up to the stride gets 1.0. The transposed copy's are those of x^T. A
  // tile writes its rows' (columns') scales there contiguously, where the row-major grid
  // takes one 32-byte sector per scale.
  float* gemm_scale = nullptr;
  int64_t gemm_stride = 0;
  float* gemm_scale_t = nullptr;
  int64_t gemm_stride_t = 0;
};

inline constexpr int kColScalePitch = 20;

// Shared memory of one block; arrays a scaling does not use shrink to one element.
template <TileScaling kScaling, bool kTranspose>
struct TileShared {
  static constexpr bool kColumnAmax =
      kTranspose && (kScaling == TileScaling::kBlock1x128 || kScaling == TileScaling::kMx1x32);
  static constexpr bool kMxColumns = kTranspose && kScaling == TileScaling::kMx1x32;
  static constexpr int kColPasses = kScaling == TileScaling::kMx1x32 ? kPasses : 1;
  union {
    std::conditional_t<kTranspose, Fp8Tile, uint32_t> tile;
    // MX: the tile's BF16 words (MxRawPut's layout) for the column maxima, read before
    // the FP8 tile is written over them.
    uint32_t mx_raw[kMxColumns ? kTile : 1][kMxColumns ? 64 : 1];
  };
  uint32_t warp_max[8];
  // 1x128: packed column |x| maxima per (warp, word).
  uint32_t col_part[kColumnAmax && !kMxColumns ? 8 : 1][kColumnAmax && !kMxColumns ? 64 : 1];
  // The per-column multipliers.
  // [pass][chunk][column in chunk]: each chunk's 16 scales padded to 20 floats, so the 8
  // chunks a warp reads start in 8 different bank quads (20 * c mod 32 is distinct).
  alignas(16) float col_scale[kColumnAmax ? kColPasses : 1][kColumnAmax ? 8 : 1]
                             [kColumnAmax ? kColScalePitch : 4];
  // 1x128: the tile's 128 row scale_inv, written out after the cast (RowScalesOut).
  float row_inv[kScaling == TileScaling::kBlock1x128 ? kTile : 1];
  // MX: the tile's swizzle tiles (x's and x^T's), written out at the end of the kernel.
  alignas(16) uint8_t mx_sw[kScaling == TileScaling::kMx1x32 ? 512 : 16];
  alignas(16) uint8_t mx_sw_t[kScaling == TileScaling::kMx1x32 && kTranspose ? 512 : 16];
};

// Byte offset of (row r, scale column j) of a 128x4 swizzle tile.
__device__ __forceinline__ int SwizzleOffset(int r, int j) {
  return (r % 32) * 16 + (r / 32) * 4 + j;
}

// Max of a packed-abs value over the block; every thread gets the result.
__device__ inline uint32_t TileMax(uint32_t packed, uint32_t (&warp_max)[8]) {
  const uint32_t v = MaxHalves(ShuffleMax2<1, 16>(packed));
  if (threadIdx.x % 32 == 0) warp_max[threadIdx.x / 32] = v;
  __syncthreads();
  uint32_t m = 0;
#pragma unroll
  for (int i = 0; i < 8; ++i) m = max(m, warp_max[i]);
  return m;
}

// Packed |x| of a word: NaN halves count as 0 (kNanSafe, R7) or above Inf (AbsBits2, for
// data known to hold no NaN).
template <bool kNanSafe>
__device__ __forceinline__ uint32_t TileAbs2(uint32_t packed) {
  return kNanSafe ? AbsBitsNoNan2(packed) : AbsBits2(packed);
}

// Packed |x| maxima of the thread's 8 words in pass p (or over all passes).
template <bool kNanSafe = true>
__device__ inline uint32_t PackedMax(const uint32_t (&w)[kWords]) {
  uint32_t m = 0;
#pragma unroll
  for (int k = 0; k < kWords; ++k) m = __vmaxu2(m, TileAbs2<kNanSafe>(w[k]));
  return m;
}

// Whether any of the warp's words holds a NaN, from the lanes' unmasked maxima. The
// maxima the 1x128, 128x128 and per-tensor paths take reduce within a warp first (rows by
// shuffles, columns and whole tiles into per-warp parts), so a warp without NaN takes the
// unmasked |x| (one instruction per word where the masking takes five) and no barrier is
// needed to decide.
__device__ __forceinline__ bool WarpSawNan(uint32_t lane_max) {
  return __any_sync(0xFFFFFFFFu, HasNan(MaxHalves(lane_max)));
}

// The packed |x| maxima of 8 words, masked (R7) only where the unmasked maximum shows a
// NaN. A lane's masked and unmasked maxima agree when it holds no NaN, so lanes may
// decide each for itself before their maxima are combined.
__device__ inline uint32_t PackedMaxNanSafe(const uint32_t (&w)[kWords]) {
  const uint32_t m = PackedMax<false>(w);
  return HasNan(MaxHalves(m)) ? PackedMax<true>(w) : m;
}

// MX +T: stores a thread's 8 words of one row into its mx_raw row, word k of chunk at
// index (k / 4) * 32 + chunk * 4 + k % 4, so a warp's two 16-byte stores per pass each
// cover 4 rows x 128 contiguous bytes (no bank conflict) and a warp reading 32
// consecutive indices of a row reads 32 banks.
__device__ inline void MxRawPut(uint32_t (*raw)[64], int row, int chunk,
                                const uint32_t (&w)[kWords]) {
  auto* r = reinterpret_cast<uint4*>(raw[row]);
  r[chunk] = make_uint4(w[0], w[1], w[2], w[3]);
  r[8 + chunk] = make_uint4(w[4], w[5], w[6], w[7]);
}

// The thread's packed |x| maxima, each word's |x| taken once: per pass (its row segment
// of 16) and, with kCols, per word over the passes (its 2 columns over 4 rows).
template <bool kNanSafe, bool kCols>
__device__ inline void ThreadMaxima(const uint32_t (&w)[kPasses][kWords],
                                    uint32_t (&row_max)[kPasses], uint32_t (&col_max)[kWords]) {
#pragma unroll
  for (int k = 0; k < kWords; ++k) col_max[k] = 0;
#pragma unroll
  for (int pass = 0; pass < kPasses; ++pass) {
    row_max[pass] = 0;
#pragma unroll
    for (int k = 0; k < kWords; ++k) {
      const uint32_t a = TileAbs2<kNanSafe>(w[pass][k]);
      row_max[pass] = __vmaxu2(row_max[pass], a);
      if constexpr (kCols) col_max[k] = __vmaxu2(col_max[k], a);
    }
  }
}

// Casts the thread's 16 values of one pass with one scale into 16 FP8 bytes.
__device__ inline void CastRow16(const uint32_t (&w)[kWords], float scale, Fp8Format f,
                                 uint32_t (&b)[4]) {
#pragma unroll
  for (int q = 0; q < 4; ++q) b[q] = ScaleCastQuad(w[2 * q], w[2 * q + 1], scale, f);
}

// Casts with a per-column multiplier (chunk_scales[i] for element i; 16-byte aligned).
__device__ inline void CastRow16PerColumn(const uint32_t (&w)[kWords], const float* chunk_scales,
                                          Fp8Format f, uint32_t (&b)[4]) {
#pragma unroll
  for (int q = 0; q < 4; ++q) {
    const uint32_t p0 = w[2 * q], p1 = w[2 * q + 1];
    const float4 s = reinterpret_cast<const float4*>(chunk_scales)[q];
    b[q] = CastFp8x4(__fmul_rn(LowBf16(p0), s.x), __fmul_rn(HighBf16(p0), s.y),
                     __fmul_rn(LowBf16(p1), s.z), __fmul_rn(HighBf16(p1), s.w), f);
  }
}

// 1x128: the warp's part of each column maximum (`col_max`, the thread's 4 rows) into
// shared memory.
template <TileScaling kScaling, bool kTranspose>
__device__ inline void ColumnParts(const uint32_t (&col_max)[kWords],
                                   TileShared<kScaling, kTranspose>& sh) {
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
#pragma unroll
  for (int k = 0; k < kWords; ++k) {
    const uint32_t m = ShuffleMax2<8, 16>(col_max[k]);  // lanes of one chunk: the warp's 4 rows
    if (lane < 8) sh.col_part[warp][lane * kWords + k] = m;
  }
}

// MX: the packed |x| maximum of column pair word `index` (MxRawPut's layout) over the 32
// rows of pass `cp`, from the raw words in shared memory; masked (R7) only where a NaN
// shows.
__device__ inline uint32_t MxColumnMax(const uint32_t (*raw)[64], int cp, int index) {
  // Unrolled by 8: the tile's words stay live in registers meanwhile.
  uint32_t m = 0;
#pragma unroll 8
  for (int r = 0; r < 32; ++r) m = __vmaxu2(m, AbsBits2(raw[cp * 32 + r][index]));
  if (HasNan(MaxHalves(m))) {
    m = 0;
#pragma unroll 8
    for (int r = 0; r < 32; ++r) m = __vmaxu2(m, AbsBitsNoNan2(raw[cp * 32 + r][index]));
  }
  return m;
}

// Column amaxes for the transposed output: per column of the tile (1x128 over all 128
// rows, MX per 32-row pass), reduced to per-column scales in shared memory. The scale
// grids of the transposed output are written here too.
// `col_max` (1x128): the thread's packed column maxima over its 4 passes (the kernel's
// one pass over the tile's |x|). MX reads the raw words MxRawPut stored.
template <TileScaling kScaling, bool kTranspose>
__device__ void ColumnScales(const TileParams& p, const TileCoords& t,
                             const uint32_t (&col_max)[kWords],
                             TileShared<kScaling, kTranspose>& sh) {
  constexpr bool kMx = kScaling == TileScaling::kMx1x32;
  if constexpr (!kMx) ColumnParts<kScaling, kTranspose>(col_max, sh);
  __syncthreads();
  const int64_t n_row_groups = CeilDivDevice(p.rows, kMx ? 32 : kTile);
  if constexpr (kMx) {
    // One (pass, column pair) per thread: 4 passes x 64 words.
    const int cp = threadIdx.x / 64, index = threadIdx.x % 64;
    const uint32_t m = MxColumnMax(sh.mx_raw, cp, index);
    const int chunk = (index % 32) / 4, k = (index / 32) * 4 + index % 4;
    const int64_t group = blockIdx.y * 4 + cp;
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int c = chunk * 16 + 2 * k + h;
      const int64_t col = t.col0 + c;
      const uint8_t b = MxScaleFromBf16Amax(h ? m >> 16 : m & 0xFFFFu);
      sh.col_scale[cp][c / 16][c % 16] = MxMultiplier(b);
      if (p.mx_scales_t != nullptr && col < p.cols && t.row0 + 32 * cp < p.rows) {
        p.mx_scales_t[col * n_row_groups + group] = b;
      }
      sh.mx_sw_t[SwizzleOffset(c, cp)] = b;
    }
  } else {
    for (int c = threadIdx.x; c < kTile; c += kTileThreads) {
      uint32_t m = 0;
#pragma unroll
      for (int wp = 0; wp < 8; ++wp) m = __vmaxu2(m, sh.col_part[wp][c / 2]);
      const int64_t col = t.col0 + c;
      const int64_t group = blockIdx.y;
      float inv;
      const float s = BlockScaleFromBf16Amax(c % 2 ? m >> 16 : m & 0xFFFFu, p.pow2, &inv);
      sh.col_scale[0][c / 16][c % 16] = s;
      if (col < p.cols && p.scale_inv_t != nullptr) p.scale_inv_t[col * n_row_groups + group] = inv;
      if (p.gemm_scale_t != nullptr && col < p.gemm_stride_t) {
        p.gemm_scale_t[group * p.gemm_stride_t + col] = inv;  // columns past the end: 1
      }
    }
  }
  __syncthreads();
}

// Row-direction scale of pass `pass` for the row-major output (1x128: its scale_inv kept
// in row_inv for RowScalesOut; MX: its scale grid written).
// `row_max` (1x128): the thread's packed maximum of the pass (the same pass over |x|).
template <TileScaling kScaling>
__device__ float RowScale(const TileParams& p, const TileCoords& t, const uint32_t (&w)[kWords],
                          uint32_t row_max, int pass, float tile_scale, float* row_inv,
                          uint8_t* mx_sw) {
  if constexpr (kScaling == TileScaling::kBlock1x128) {
    float inv;
    const float s = BlockScaleFromBf16Amax(MaxHalves(ShuffleMax2<1, 4>(row_max)), p.pow2, &inv);
    if (t.chunk == 0) row_inv[t.Row(pass)] = inv;
    return s;
  } else if constexpr (kScaling == TileScaling::kMx1x32) {
    const uint32_t m = MaxHalves(ShuffleMax2<1, 1>(PackedMaxNanSafe(w)));
    const uint8_t b = MxScaleFromBf16Amax(m);
    const int64_t row = t.row0 + t.Row(pass);
    const int64_t col = t.col0 + t.Col();
    if (t.chunk % 2 == 0) {
      if (p.mx_scales != nullptr && row < p.rows && col < p.cols) {
        p.mx_scales[row * CeilDivDevice(p.cols, 32) + col / 32] = b;
      }
      mx_sw[SwizzleOffset(t.Row(pass), t.chunk / 2)] = b;
    }
    return MxMultiplier(b);
  } else {
    return tile_scale;
  }
}

// The scale shared by the whole tile (per-tensor or 128x128), plus the tile-wide amax
// work: the fused amax of kTensor and the 128x128 scale grids.
// `tensor_scale` (kTensor): *p.tensor_scale, read by the kernel before its tile.
template <TileScaling kScaling, bool kTranspose>
__device__ float TileScale(const TileParams& p, const uint32_t (&w)[kPasses][kWords],
                           float tensor_scale, TileShared<kScaling, kTranspose>& sh) {
  const bool need_max = kScaling == TileScaling::kBlock128x128 ||
                        (kScaling == TileScaling::kTensor && p.amax_out != nullptr);
  uint32_t block_max = 0;
  if (need_max) {
    uint32_t m = 0;
#pragma unroll
    for (int pass = 0; pass < kPasses; ++pass) m = __vmaxu2(m, PackedMax<false>(w[pass]));
    if (WarpSawNan(m)) {
      m = 0;
#pragma unroll
      for (int pass = 0; pass < kPasses; ++pass) m = __vmaxu2(m, PackedMax<true>(w[pass]));
    }
    block_max = TileMax(m, sh.warp_max);
  }
  if constexpr (kScaling == TileScaling::kTensor) {
    if (p.amax_out != nullptr && threadIdx.x == 0 && block_max != 0) {
      AtomicMaxNonNegative(p.amax_out, Bf16AbsBitsToFloat(block_max));
    }
    return tensor_scale;
  } else if constexpr (kScaling == TileScaling::kBlock128x128) {
    float inv;
    const float s = BlockScaleFromBf16Amax(block_max, p.pow2, &inv);
    if (threadIdx.x == 0) {
      if (p.scale_inv != nullptr) {
        p.scale_inv[blockIdx.y * CeilDivDevice(p.cols, kTile) + blockIdx.x] = inv;
      }
      if (p.scale_inv_t != nullptr) {
        p.scale_inv_t[blockIdx.x * CeilDivDevice(p.rows, kTile) + blockIdx.y] = inv;
      }
      if (p.gemm_scale != nullptr) p.gemm_scale[blockIdx.y * p.gemm_stride + blockIdx.x] = inv;
      if (p.gemm_scale_t != nullptr) {
        p.gemm_scale_t[blockIdx.x * p.gemm_stride_t + blockIdx.y] = inv;
      }
    }
    // The last tile of a row (column) of tiles pads its K blocks up to the stride.
    if (p.gemm_scale != nullptr && blockIdx.x == gridDim.x - 1) {
      for (int64_t b = gridDim.x + threadIdx.x; b < p.gemm_stride; b += kTileThreads) {
        p.gemm_scale[blockIdx.y * p.gemm_stride + b] = 1.0f;
      }
    }
    if (p.gemm_scale_t != nullptr && blockIdx.y == gridDim.y - 1) {
      for (int64_t b = gridDim.y + threadIdx.x; b < p.gemm_stride_t; b += kTileThreads) {
        p.gemm_scale_t[blockIdx.x * p.gemm_stride_t + b] = 1.0f;
      }
    }
    return s;
  } else {
    return 0.0f;  // per-row scalings compute theirs in RowScale
  }
}

// 1x128: the tile's row scales from shared memory to the row-major grid and cuBLASLt's
// layout, one thread per row (after a barrier since RowScale). Out of the cast loop,
// whose registers hold the tile; the layout's 128 floats are one contiguous store. Rows
// past the end read as zeros: their scale is 1, the layout's padding value.
__device__ inline void RowScalesOut(const TileParams& p, const TileCoords& t,
                                    const float* row_inv) {
  if (threadIdx.x >= kTile) return;
  const int64_t row = t.row0 + threadIdx.x;
  const float inv = row_inv[threadIdx.x];
  if (p.scale_inv != nullptr && row < p.rows) {
    p.scale_inv[row * CeilDivDevice(p.cols, kTile) + blockIdx.x] = inv;
  }
  if (p.gemm_scale != nullptr && row < p.gemm_stride) {
    p.gemm_scale[blockIdx.x * p.gemm_stride + row] = inv;
  }
}

template <TileScaling kScaling, bool kTranspose>
__global__ void __launch_bounds__(kTileThreads, 4) TileQuantizeKernel(const TileParams p) {
  __shared__ TileShared<kScaling, kTranspose> sh;
  // A launch that follows with programmatic serialization (delayed scaling's step,
  // cast_transpose.cu) may start now: it waits for this grid's completion itself.
  if constexpr (kScaling == TileScaling::kTensor) {
    asm volatile("griddepcontrol.launch_dependents;\n" ::: "memory");
  }
  const TileCoords t = MakeTileCoords();
  const bool full = p.vec_ok && t.row0 + kTile <= p.rows && t.col0 + kTile <= p.cols;
  // The per-tensor scale is read first: read after the tile's maximum (a barrier), its
  // latency would stand between the loads and the cast of every block.
  float tensor_scale = 0.0f;
  if constexpr (kScaling == TileScaling::kTensor) tensor_scale = __ldg(p.tensor_scale);
  uint32_t w[kPasses][kWords];
  LoadTile(p.x, p.rows, p.cols, t, full, w);

  const float tile_scale = TileScale<kScaling, kTranspose>(p, w, tensor_scale, sh);
  // 1x128: each word's |x| once, for its row's maximum and its column's (masked again
  // in a warp that saw a NaN).
  uint32_t row_max[kPasses] = {}, col_max[kWords] = {};
  if constexpr (kScaling == TileScaling::kBlock1x128) {
    ThreadMaxima<false, kTranspose>(w, row_max, col_max);
    uint32_t m = 0;
#pragma unroll
    for (int pass = 0; pass < kPasses; ++pass) m = __vmaxu2(m, row_max[pass]);
    if (WarpSawNan(m)) ThreadMaxima<true, kTranspose>(w, row_max, col_max);
  }
  if constexpr (TileShared<kScaling, kTranspose>::kMxColumns) {
#pragma unroll
    for (int pass = 0; pass < kPasses; ++pass) MxRawPut(sh.mx_raw, t.Row(pass), t.chunk, w[pass]);
  }
  if constexpr (TileShared<kScaling, kTranspose>::kColumnAmax) {
    ColumnScales<kScaling, kTranspose>(p, t, col_max, sh);
  }
  // Scalings whose transposed bytes equal the row-major bytes reuse them.
  constexpr bool kSameBytes =
      kScaling == TileScaling::kTensor || kScaling == TileScaling::kBlock128x128;
#pragma unroll
  for (int pass = 0; pass < kPasses; ++pass) {
    const float s =
        RowScale<kScaling>(p, t, w[pass], row_max[pass], pass, tile_scale, sh.row_inv, sh.mx_sw);
    uint32_t b[4];
    CastRow16(w[pass], s, p.format, b);
    StoreRow16(p.out, p.rows, p.cols, t.row0 + t.Row(pass), t.col0 + t.Col(), full, b);
    if constexpr (kTranspose) {
      if constexpr (!kSameBytes) {
        constexpr int kMxCol = kScaling == TileScaling::kMx1x32;
        CastRow16PerColumn(w[pass], sh.col_scale[kMxCol ? pass : 0][t.chunk], p.format, b);
      }
      sh.tile.PutRow16(t.Row(pass), t.chunk, b);
    }
  }
  if constexpr (kTranspose) {
    __syncthreads();
    sh.tile.StoreTransposed(p.out_t, p.rows, p.cols, t.row0, t.col0, full);
  }
  if constexpr (kScaling == TileScaling::kBlock1x128) {
    if constexpr (!kTranspose) __syncthreads();
    RowScalesOut(p, t, sh.row_inv);
  }
  if constexpr (kScaling == TileScaling::kMx1x32) {
    if constexpr (!kTranspose) __syncthreads();
    // One 512-byte swizzle tile each: x's at (row tile, column tile), x^T's transposed.
    const int i = threadIdx.x % 32;
    if (threadIdx.x < 32 && p.mx_swizzled != nullptr) {
      reinterpret_cast<uint4*>(p.mx_swizzled +
                               (blockIdx.y * int64_t{gridDim.x} + blockIdx.x) * 512)[i] =
          reinterpret_cast<const uint4*>(sh.mx_sw)[i];
    }
    if constexpr (kTranspose) {
      if (threadIdx.x >= 32 && threadIdx.x < 64 && p.mx_swizzled_t != nullptr) {
        reinterpret_cast<uint4*>(p.mx_swizzled_t +
                                 (blockIdx.x * int64_t{gridDim.y} + blockIdx.y) * 512)[i] =
            reinterpret_cast<const uint4*>(sh.mx_sw_t)[i];
      }
    }
  }
}

}  // namespace gemmprof::kernels::detail

namespace gemmprof::kernels::detail {

// Whether the fast path's 16-byte accesses are legal for this tensor: rows of x and out
// start on 16 bytes, and so do the rows of out_t (16 rows at a time).
inline bool TileVectorOk(const TileParams& p) {
  const auto aligned = [](const void* ptr) { return reinterpret_cast<uintptr_t>(ptr) % 16 == 0; };
  return p.cols % 16 == 0 && (p.out_t == nullptr || p.rows % 16 == 0) && aligned(p.x) &&
         aligned(p.out) && aligned(p.out_t);
}

// Launches the tile kernel for `kScaling` over the whole tensor (p.rows, p.cols > 0).
template <TileScaling kScaling>
cudaError_t LaunchTileQuantize(TileParams p, cudaStream_t stream) {
  const int64_t tiles_x = CeilDivDevice(p.cols, kTile), tiles_y = CeilDivDevice(p.rows, kTile);
  if (tiles_y > 65535 || tiles_x > 0x7FFFFFFF) return cudaErrorInvalidValue;
  p.vec_ok = TileVectorOk(p);
  const dim3 grid(static_cast<unsigned>(tiles_x), static_cast<unsigned>(tiles_y));
  if (p.out_t != nullptr) {
    TileQuantizeKernel<kScaling, true><<<grid, kTileThreads, 0, stream>>>(p);
  } else {
    TileQuantizeKernel<kScaling, false><<<grid, kTileThreads, 0, stream>>>(p);
  }
  return cudaGetLastError();
}

}  // namespace gemmprof::kernels::detail
