// CurrentScalingQuantize: the whole current-scaling step (amax, scale, cast, optional
// transpose) in one cooperative launch. Current scaling has to see every element before
// it can cast the first one, so the input is read twice; this kernel makes the second
// read cheap. Each block owns a fixed set of 128x128 tiles and walks them twice:
//   1. ascending, reducing max |x|; its last tile stays in registers and the one before
//      in shared memory, and the grid's most recent tiles are the ones left in L2;
//   2. after a grid-wide barrier and the scale, descending: the two on-chip tiles first,
//      then the tiles L2 is most likely to still hold.
// It replaces Amax + ComputeScale + CastTranspose (four stream operations with the
// memset) with one, and its numerics are theirs bit for bit (same reductions, same
// scale rule, same cast).
#include <cooperative_groups.h>

#include <algorithm>
#include <cstdint>

#include "kernels/quant/launch_utils.cuh"
#include "kernels/quant/quantize.h"
#include "kernels/quant/tile_quantize.cuh"

namespace gemmprof::kernels {
namespace {

namespace cg = cooperative_groups;
using detail::kPasses;
using detail::kTile;
using detail::kTileThreads;
using detail::kWords;

// Blocks per SM the kernel is built for (64 registers per thread); the launch asks the
// occupancy calculator and never exceeds what is co-resident.
constexpr int kBlocksPerSm = 4;
// One BF16 tile of the thread's 32 words, word-major so a warp's stores hit 32 banks.
constexpr size_t kStashBytes = sizeof(uint32_t) * kPasses * kWords * kTileThreads;

struct Outputs {
  float* partial;    // [gridDim.x] block maxima (workspace)
  float* amax;       // nullable
  float* scale;      // required
  float* scale_inv;  // nullable
  float fp8_max;
};

__device__ inline bool FullTile(const detail::TileParams& p, const detail::TileCoords& t) {
  return p.vec_ok && t.row0 + kTile <= p.rows && t.col0 + kTile <= p.cols;
}

// Max over the block of non-negative float bit patterns; every thread gets it.
__device__ inline uint32_t BlockMaxBits(uint32_t v, uint32_t (&warp_max)[8]) {
  for (int m = 16; m > 0; m >>= 1) v = max(v, __shfl_xor_sync(0xFFFFFFFFu, v, m));
  __syncthreads();  // warp_max may still be read by an earlier reduction
  if (threadIdx.x % 32 == 0) warp_max[threadIdx.x / 32] = v;
  __syncthreads();
  uint32_t r = 0;
#pragma unroll
  for (int i = 0; i < 8; ++i) r = max(r, warp_max[i]);
  return r;
}

template <bool kTranspose>
__global__ void __launch_bounds__(kTileThreads, kBlocksPerSm)
    CurrentScalingKernel(const detail::TileParams p, const Outputs o) {
  __shared__ detail::TileShared<detail::TileScaling::kTensor, kTranspose> sh;
  extern __shared__ uint32_t stash[];  // kStashBytes
  const int64_t tiles_x = detail::CeilDivDevice(p.cols, kTile);
  const int64_t tiles = tiles_x * detail::CeilDivDevice(p.rows, kTile);
  const int64_t first = blockIdx.x, step = gridDim.x;
  const int64_t mine = tiles > first ? (tiles - 1 - first) / step + 1 : 0;
  const auto coords = [&](int64_t j) {
    const int64_t tile = first + j * step;
    return detail::TileCoordsAt(tile / tiles_x, tile % tiles_x);
  };
  const auto stash_at = [&](int pass, int k) -> uint32_t& {
    return stash[(pass * kWords + k) * kTileThreads + threadIdx.x];
  };

  // Pass 1: max |x| over the block's tiles.
  uint32_t w[kPasses][kWords] = {};
  uint32_t packed = 0;
  for (int64_t j = 0; j < mine; ++j) {
    const detail::TileCoords t = coords(j);
    detail::LoadTile(p.x, p.rows, p.cols, t, FullTile(p, t), w);
#pragma unroll
    for (int pass = 0; pass < kPasses; ++pass) packed = __vmaxu2(packed, detail::PackedMax(w[pass]));
    if (j == mine - 2) {
#pragma unroll
      for (int pass = 0; pass < kPasses; ++pass) {
#pragma unroll
        for (int k = 0; k < kWords; ++k) stash_at(pass, k) = w[pass][k];
      }
    }
  }
  const uint32_t block_max = detail::TileMax(packed, sh.warp_max);
  if (threadIdx.x == 0) o.partial[blockIdx.x] = detail::Bf16AbsBitsToFloat(block_max);
  cg::this_grid().sync();

  // The tensor's amax (the partials are non-negative floats: their bits order like them).
  uint32_t bits = 0;
  for (int i = threadIdx.x; i < gridDim.x; i += kTileThreads) {
    bits = max(bits, __float_as_uint(__ldcg(o.partial + i)));
  }
  const float amax = __uint_as_float(BlockMaxBits(bits, sh.warp_max));
  const float scale = detail::ScaleFromAmax(amax, o.fp8_max);
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    if (o.amax != nullptr) *o.amax = amax;
    *o.scale = scale;
    if (o.scale_inv != nullptr) *o.scale_inv = __fdiv_rn(1.0f, scale);
  }

  // Pass 2: cast, most recently read tiles first.
  for (int64_t j = mine - 1; j >= 0; --j) {
    const detail::TileCoords t = coords(j);
    const bool full = FullTile(p, t);
    if (j == mine - 2) {
#pragma unroll
      for (int pass = 0; pass < kPasses; ++pass) {
#pragma unroll
        for (int k = 0; k < kWords; ++k) w[pass][k] = stash_at(pass, k);
      }
    } else if (j < mine - 2) {
      detail::LoadTile(p.x, p.rows, p.cols, t, full, w);
    }
#pragma unroll
    for (int pass = 0; pass < kPasses; ++pass) {
      uint32_t b[4];
      detail::CastRow16(w[pass], scale, p.format, b);
      detail::StoreRow16(p.out, p.rows, p.cols, t.row0 + t.Row(pass), t.col0 + t.Col(), full, b);
      if constexpr (kTranspose) sh.tile.PutRow16(t.Row(pass), t.chunk, b);
    }
    if constexpr (kTranspose) {
      __syncthreads();
      sh.tile.StoreTransposed(p.out_t, p.rows, p.cols, t.row0, t.col0, full);
      __syncthreads();  // the next tile's PutRow16 overwrites the shared tile
    }
  }
}

template <bool kTranspose>
cudaError_t Launch(const detail::TileParams& p, const Outputs& o, cudaStream_t stream) {
  const auto kernel = CurrentScalingKernel<kTranspose>;
  cudaError_t err =
      cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kStashBytes);
  if (err != cudaSuccess) return err;
  int per_sm = 0;
  err = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, kTileThreads, kStashBytes);
  if (err != cudaSuccess) return err;
  if (per_sm < 1) return cudaErrorLaunchOutOfResources;
  const int64_t tiles =
      detail::CeilDivDevice(p.rows, kTile) * detail::CeilDivDevice(p.cols, kTile);
  const int64_t resident = static_cast<int64_t>(per_sm) * std::max(1, detail::CurrentSmCount());
  // As many blocks as fit, then as few as give every block the same number of tiles (a
  // block with one tile more than the rest sets the time of both passes).
  const int64_t slots = std::max<int64_t>(1, std::min(resident, kCurrentScalingWorkspaceFloats));
  const int64_t per_block = std::max<int64_t>(1, detail::CeilDivDevice(tiles, slots));
  const int64_t blocks = std::max<int64_t>(1, detail::CeilDivDevice(tiles, per_block));
  detail::TileParams params = p;
  Outputs outputs = o;
  void* args[] = {&params, &outputs};
  err = cudaLaunchCooperativeKernel(reinterpret_cast<const void*>(kernel),
                                    dim3(static_cast<unsigned>(blocks)), dim3(kTileThreads), args,
                                    kStashBytes, stream);
  return err != cudaSuccess ? err : cudaGetLastError();
}

}  // namespace

cudaError_t CurrentScalingQuantize(const __nv_bfloat16* x, int64_t rows, int64_t cols,
                                   Fp8Format f, uint8_t* out, uint8_t* out_t, float* amax,
                                   float* scale, float* scale_inv, float* workspace,
                                   cudaStream_t stream) {
  const bool empty = rows == 0 || cols == 0;
  if (rows < 0 || cols < 0 || scale == nullptr || workspace == nullptr ||
      (!empty && (x == nullptr || out == nullptr))) {
    return cudaErrorInvalidValue;
  }
  if (detail::CeilDivDevice(rows, kTile) * detail::CeilDivDevice(cols, kTile) >
      (int64_t{1} << 40)) {
    return cudaErrorInvalidValue;
  }
  detail::TileParams p;
  p.x = reinterpret_cast<const uint16_t*>(x);
  p.rows = rows;
  p.cols = cols;
  p.format = f;
  p.out = out;
  p.out_t = empty ? nullptr : out_t;
  p.vec_ok = !empty && detail::TileVectorOk(p);
  const Outputs o{workspace, amax, scale, scale_inv, detail::Fp8MaxOf(f)};
  return p.out_t != nullptr ? Launch<true>(p, o, stream) : Launch<false>(p, o, stream);
}

cudaError_t CurrentScaling(const __nv_bfloat16* x, int64_t rows, int64_t cols, Fp8Format f,
                           uint8_t* out, uint8_t* out_t, float* amax, float* scale,
                           float* scale_inv, float* workspace, cudaStream_t stream) {
  if (rows < 0 || cols < 0 || amax == nullptr) return cudaErrorInvalidValue;
  const int64_t n = rows * cols;
  if (n <= (out_t != nullptr ? kFusedCurrentScalingMaxTransposed : kFusedCurrentScalingMax)) {
    return CurrentScalingQuantize(x, rows, cols, f, out, out_t, amax, scale, scale_inv, workspace,
                                  stream);
  }
  cudaError_t err = Amax(x, n, amax, stream);
  if (err == cudaSuccess) err = ComputeScale(amax, f, scale, scale_inv, stream);
  if (err == cudaSuccess) err = CastTranspose(x, rows, cols, scale, f, out, out_t, nullptr, stream);
  return err;
}

}  // namespace gemmprof::kernels
