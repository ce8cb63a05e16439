// Loads and stores of one 128x128 tile for the tile quantization kernels: a 16-byte
// vectorized path for full, aligned tiles and a bounds-checked scalar path for the tiles
// on a ragged edge. Both paths put the same values in the same registers, so the
// arithmetic between load and store is one code path.
//
// Thread layout (256 threads, 8 warps): thread (warp, lane) owns columns
// 16 * (lane % 8) .. +15 of tile rows p * 32 + warp * 4 + lane / 8 for passes p = 0..3.
#pragma once

#include <cstdint>

namespace gemmprof::kernels::detail {

inline constexpr int kTile = 128;         // rows and columns of a tile
inline constexpr int kTileThreads = 256;  // 8 warps
inline constexpr int kPasses = 4;         // 32 rows per pass
inline constexpr int kWords = 8;          // 16 BF16 per thread and pass, 2 per word

__host__ __device__ constexpr int64_t CeilDivDevice(int64_t a, int64_t b) {
  return (a + b - 1) / b;
}

struct TileCoords {
  int64_t row0, col0;  // tile origin in the tensor
  int row_in_pass;     // 0..31
  int chunk;           // 0..7, columns 16 * chunk .. + 15
  __device__ int Row(int pass) const { return pass * 32 + row_in_pass; }
  __device__ int Col() const { return chunk * 16; }
};

// Coordinates of tile (tile_row, tile_col) for this thread.
__device__ inline TileCoords TileCoordsAt(int64_t tile_row, int64_t tile_col) {
  TileCoords t;
  t.row0 = tile_row * kTile;
  t.col0 = tile_col * kTile;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  t.row_in_pass = warp * 4 + lane / 8;
  t.chunk = lane % 8;
  return t;
}

// One tile per block: the tile at (blockIdx.y, blockIdx.x).
__device__ inline TileCoords MakeTileCoords() { return TileCoordsAt(blockIdx.y, blockIdx.x); }

// BF16 bit patterns of the thread's 16 x 4 elements; out-of-range elements read as +0
// (the identity of every amax, and never stored).
__device__ inline void LoadTile(const uint16_t* __restrict__ x, int64_t rows, int64_t cols,
                                const TileCoords& t, bool full, uint32_t (&w)[kPasses][kWords]) {
  if (full) {
#pragma unroll
    for (int p = 0; p < kPasses; ++p) {
      const auto* src =
          reinterpret_cast<const uint4*>(x + (t.row0 + t.Row(p)) * cols + t.col0 + t.Col());
      const uint4 a = __ldg(src), b = __ldg(src + 1);
      w[p][0] = a.x, w[p][1] = a.y, w[p][2] = a.z, w[p][3] = a.w;
      w[p][4] = b.x, w[p][5] = b.y, w[p][6] = b.z, w[p][7] = b.w;
    }
    return;
  }
#pragma unroll
  for (int p = 0; p < kPasses; ++p) {
    const int64_t r = t.row0 + t.Row(p);
#pragma unroll
    for (int k = 0; k < kWords; ++k) {
      const int64_t c = t.col0 + t.Col() + 2 * k;
      const uint16_t* src = x + r * cols + c;
      const uint32_t lo = (r < rows && c < cols) ? src[0] : 0u;
      const uint32_t hi = (r < rows && c + 1 < cols) ? src[1] : 0u;
      w[p][k] = lo | (hi << 16);
    }
  }
}

// Stores 16 bytes (4 words, lowest byte first) at columns col..col+15 of `row`.
__device__ inline void StoreRow16(uint8_t* __restrict__ out, int64_t rows, int64_t cols,
                                  int64_t row, int64_t col, bool full, const uint32_t (&b)[4]) {
  uint8_t* dst = out + row * cols + col;
  if (full) {
    *reinterpret_cast<uint4*>(dst) = make_uint4(b[0], b[1], b[2], b[3]);
    return;
  }
  if (row >= rows) return;
#pragma unroll
  for (int i = 0; i < 16; ++i) {
    if (col + i < cols) dst[i] = static_cast<uint8_t>(b[i / 4] >> (8 * (i % 4)));
  }
}

// 4x4 byte transpose: in[q] holds row q (bytes = columns 0..3); out[j] holds column j
// (bytes = rows 0..3).
__device__ __forceinline__ void Transpose4x4(const uint32_t (&in)[4], uint32_t (&out)[4]) {
  const uint32_t t0 = __byte_perm(in[0], in[1], 0x5140);  // a0 b0 a1 b1
  const uint32_t t1 = __byte_perm(in[2], in[3], 0x5140);  // c0 d0 c1 d1
  const uint32_t t2 = __byte_perm(in[0], in[1], 0x7362);  // a2 b2 a3 b3
  const uint32_t t3 = __byte_perm(in[2], in[3], 0x7362);  // c2 d2 c3 d3
  out[0] = __byte_perm(t0, t1, 0x5410);
  out[1] = __byte_perm(t0, t1, 0x7632);
  out[2] = __byte_perm(t2, t3, 0x5410);
  out[3] = __byte_perm(t2, t3, 0x7632);
}

// The FP8 tile in shared memory, 128 rows of 8 16-byte groups. Group g of row r lives at
// g ^ (r / 16): the transposed read below has the 8 lanes of a row group hit 8 different
// 16-byte groups, so neither the row-wise writes nor the column-wise reads conflict.
struct Fp8Tile {
  uint4 g[kTile][8];

  __device__ void PutRow16(int r, int chunk, const uint32_t (&b)[4]) {
    g[r][chunk ^ (r >> 4)] = make_uint4(b[0], b[1], b[2], b[3]);
  }

  // Writes the transposed tile: out_t is [cols, rows]. Thread (warp, lane) moves the
  // 16 rows (lane % 8) * 16.. of the 4 columns 16 * warp + 4 * (lane / 8) ..
  __device__ void StoreTransposed(uint8_t* __restrict__ out_t, int64_t rows, int64_t cols,
                                  int64_t row0, int64_t col0, bool full) const {
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int rg = lane % 8, kq = lane / 8;
    const auto* words = reinterpret_cast<const uint32_t*>(&g[0][0]);
    uint32_t col_words[4][4];  // [row quad][column j]
#pragma unroll
    for (int q = 0; q < 4; ++q) {
      uint32_t in[4];
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        const int r = rg * 16 + q * 4 + i;
        in[i] = words[r * 32 + (warp ^ rg) * 4 + kq];
      }
      Transpose4x4(in, col_words[q]);
    }
    const int64_t row = row0 + rg * 16;
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      const int64_t col = col0 + warp * 16 + kq * 4 + j;
      const uint32_t b[4] = {col_words[0][j], col_words[1][j], col_words[2][j], col_words[3][j]};
      // out_t row `col`, columns row..row+15.
      StoreRow16(out_t, cols, rows, col, row, full, b);
    }
  }
};

}  // namespace gemmprof::kernels::detail
