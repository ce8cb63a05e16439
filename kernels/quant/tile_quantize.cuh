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
  float* amax_out = nullptr;  // kTensor: fused amax, reset by the launcher
  uint8_t* out = nullptr;
  uint8_t* out_t = nullptr;  // null: no transposed output
  float* scale_inv = nullptr;
  float* scale_inv_t = nullptr;
  uint8_t* mx_scales = nullptr;
  uint8_t* mx_scales_t = nullptr;
};

inline constexpr int kColScalePitch = 20;

// Shared memory of one block; arrays a scaling does not use shrink to one element.
template <TileScaling kScaling, bool kTranspose>
struct TileShared {
  static constexpr bool kColumnAmax =
      kTranspose && (kScaling == TileScaling::kBlock1x128 || kScaling == TileScaling::kMx1x32);
  static constexpr int kColPasses = kScaling == TileScaling::kMx1x32 ? kPasses : 1;
  std::conditional_t<kTranspose, Fp8Tile, uint32_t> tile;
  uint32_t warp_max[8];
  // Packed column |x| maxima per (pass, warp, word), then the per-column multipliers.
  uint32_t col_part[kColumnAmax ? kColPasses : 1][kColumnAmax ? 8 : 1][kColumnAmax ? 64 : 1];
  // [pass][chunk][column in chunk]: each chunk's 16 scales padded to 20 floats, so the 8
  // chunks a warp reads start in 8 different bank quads (20 * c mod 32 is distinct).
  alignas(16) float col_scale[kColumnAmax ? kColPasses : 1][kColumnAmax ? 8 : 1]
                             [kColumnAmax ? kColScalePitch : 4];
};

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

// Packed |x| maxima of the thread's 8 words in pass p (or over all passes).
__device__ inline uint32_t PackedMax(const uint32_t (&w)[kWords]) {
  uint32_t m = 0;
#pragma unroll
  for (int k = 0; k < kWords; ++k) m = __vmaxu2(m, AbsBitsNoNan2(w[k]));
  return m;
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

// Column amaxes for the transposed output: per column of the tile (1x128 over all 128
// rows, MX per 32-row pass), reduced to per-column scales in shared memory. The scale
// grids of the transposed output are written here too.
template <TileScaling kScaling, bool kTranspose>
__device__ void ColumnScales(const TileParams& p, const TileCoords& t,
                             const uint32_t (&w)[kPasses][kWords],
                             TileShared<kScaling, kTranspose>& sh) {
  constexpr bool kMx = kScaling == TileScaling::kMx1x32;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
#pragma unroll
  for (int cp = 0; cp < TileShared<kScaling, kTranspose>::kColPasses; ++cp) {
#pragma unroll
    for (int k = 0; k < kWords; ++k) {
      uint32_t m = 0;
#pragma unroll
      for (int pass = 0; pass < kPasses; ++pass) {
        if (!kMx || pass == cp) m = __vmaxu2(m, AbsBitsNoNan2(w[pass][k]));
      }
      m = ShuffleMax2<8, 16>(m);  // lanes of one chunk: the warp's 4 rows
      if (lane < 8) sh.col_part[cp][warp][lane * kWords + k] = m;
    }
  }
  __syncthreads();
  const int64_t n_row_groups = CeilDivDevice(p.rows, kMx ? 32 : kTile);
  for (int i = threadIdx.x; i < TileShared<kScaling, kTranspose>::kColPasses * kTile;
       i += kTileThreads) {
    const int cp = i / kTile, c = i % kTile;
    uint32_t m = 0;
#pragma unroll
    for (int wp = 0; wp < 8; ++wp) m = __vmaxu2(m, sh.col_part[cp][wp][c / 2]);
    const float amax = Bf16AbsBitsToFloat(c % 2 ? m >> 16 : m & 0xFFFFu);
    const int64_t col = t.col0 + c;
    const int64_t group = kMx ? blockIdx.y * 4 + cp : blockIdx.y;
    const bool write = col < p.cols && (kMx ? t.row0 + 32 * cp < p.rows : true);
    if constexpr (kMx) {
      const uint8_t b = MxScaleFromAmax(amax);
      sh.col_scale[cp][c / 16][c % 16] = MxMultiplier(b);
      if (write) p.mx_scales_t[col * n_row_groups + group] = b;
    } else {
      const float s = BlockScaleFromAmax(amax, p.pow2);
      sh.col_scale[cp][c / 16][c % 16] = s;
      if (write) p.scale_inv_t[col * n_row_groups + group] = __fdiv_rn(1.0f, s);
    }
  }
  __syncthreads();
}

// Row-direction scale of pass `pass` for the row-major output; writes its scale grid.
template <TileScaling kScaling>
__device__ float RowScale(const TileParams& p, const TileCoords& t, const uint32_t (&w)[kWords],
                          int pass, float tile_scale) {
  if constexpr (kScaling == TileScaling::kBlock1x128) {
    const uint32_t m = MaxHalves(ShuffleMax2<1, 4>(PackedMax(w)));
    const float s = BlockScaleFromAmax(Bf16AbsBitsToFloat(m), p.pow2);
    const int64_t row = t.row0 + t.Row(pass);
    if (t.chunk == 0 && row < p.rows) {
      p.scale_inv[row * CeilDivDevice(p.cols, kTile) + blockIdx.x] = __fdiv_rn(1.0f, s);
    }
    return s;
  } else if constexpr (kScaling == TileScaling::kMx1x32) {
    const uint32_t m = MaxHalves(ShuffleMax2<1, 1>(PackedMax(w)));
    const uint8_t b = MxScaleFromAmax(Bf16AbsBitsToFloat(m));
    const int64_t row = t.row0 + t.Row(pass);
    const int64_t col = t.col0 + t.Col();
    if (t.chunk % 2 == 0 && row < p.rows && col < p.cols) {
      p.mx_scales[row * CeilDivDevice(p.cols, 32) + col / 32] = b;
    }
    return MxMultiplier(b);
  } else {
    return tile_scale;
  }
}

// The scale shared by the whole tile (per-tensor or 128x128), plus the tile-wide amax
// work: the fused amax of kTensor and the 128x128 scale grids.
template <TileScaling kScaling, bool kTranspose>
__device__ float TileScale(const TileParams& p, const uint32_t (&w)[kPasses][kWords],
                           TileShared<kScaling, kTranspose>& sh) {
  const bool need_max = kScaling == TileScaling::kBlock128x128 ||
                        (kScaling == TileScaling::kTensor && p.amax_out != nullptr);
  uint32_t block_max = 0;
  if (need_max) {
    uint32_t m = 0;
#pragma unroll
    for (int pass = 0; pass < kPasses; ++pass) m = __vmaxu2(m, PackedMax(w[pass]));
    block_max = TileMax(m, sh.warp_max);
  }
  if constexpr (kScaling == TileScaling::kTensor) {
    if (p.amax_out != nullptr && threadIdx.x == 0 && block_max != 0) {
      AtomicMaxNonNegative(p.amax_out, Bf16AbsBitsToFloat(block_max));
    }
    return *p.tensor_scale;
  } else if constexpr (kScaling == TileScaling::kBlock128x128) {
    const float s = BlockScaleFromAmax(Bf16AbsBitsToFloat(block_max), p.pow2);
    if (threadIdx.x == 0) {
      const float inv = __fdiv_rn(1.0f, s);
      p.scale_inv[blockIdx.y * CeilDivDevice(p.cols, kTile) + blockIdx.x] = inv;
      if (p.scale_inv_t != nullptr) {
        p.scale_inv_t[blockIdx.x * CeilDivDevice(p.rows, kTile) + blockIdx.y] = inv;
      }
    }
    return s;
  } else {
    return 0.0f;  // per-row scalings compute theirs in RowScale
  }
}

template <TileScaling kScaling, bool kTranspose>
__global__ void __launch_bounds__(kTileThreads, 4) TileQuantizeKernel(const TileParams p) {
  __shared__ TileShared<kScaling, kTranspose> sh;
  const TileCoords t = MakeTileCoords();
  const bool full = p.vec_ok && t.row0 + kTile <= p.rows && t.col0 + kTile <= p.cols;
  uint32_t w[kPasses][kWords];
  LoadTile(p.x, p.rows, p.cols, t, full, w);

  const float tile_scale = TileScale<kScaling, kTranspose>(p, w, sh);
  if constexpr (TileShared<kScaling, kTranspose>::kColumnAmax) {
    ColumnScales<kScaling, kTranspose>(p, t, w, sh);
  }
  // Scalings whose transposed bytes equal the row-major bytes reuse them.
  constexpr bool kSameBytes =
      kScaling == TileScaling::kTensor || kScaling == TileScaling::kBlock128x128;
#pragma unroll
  for (int pass = 0; pass < kPasses; ++pass) {
    const float s = RowScale<kScaling>(p, t, w[pass], pass, tile_scale);
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
