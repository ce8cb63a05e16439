// Nvfp4Quantize: E2M1 data, one E4M3 decode scale per 1x16 block and an fp32 tensor
// scale (R9). Each lane quantizes whole blocks: two 16-byte loads, one amax, one scale,
// one 8-byte store. A warp's two loads of a row each take every other 16 bytes of the same
// sectors and the second finds them in L1; that costs nothing measurable, where sharing a
// block between two lanes (one load each) cost an amax shuffle and the scale computed
// twice: 77.6% -> 85.5% of a copy's bandwidth when the swizzled form dropped it. With
// row-major scales only, the launch walks the grid of blocks (rows x blocks per row) as
// one flat index; with cuBLASLt's swizzled scales it walks the swizzle's 128-row x 4-block
// tiles (the grid padded to them, the padding getting scale 0), so each warp writes whole
// sectors of the scale tiles (Nvfp4SwizzledKernel).
//
// The arithmetic keeps off the integer pipe: the E2M1 rounding is saturating fp32
// products and adds on the 2^23 grid (core/quant/scale_bits.h), the signs come from the
// BF16 inputs by byte permutes, and the encode multiplier is a table lookup. A block
// holding a NaN takes the exact boundary count of device_numerics.cuh instead.
#include <cfloat>
#include <cstdint>

#include "core/quant/scale_bits.h"
#include "kernels/quant/device_numerics.cuh"
#include "kernels/quant/launch_utils.cuh"
#include "kernels/quant/quantize.h"

namespace gemmprof::kernels {
namespace {

constexpr int kThreads = 256;
constexpr int kBlock = 16;  // elements per NVFP4 block
// Blocks per lane and iteration of either walk (the swizzled one's lanes take two rows of
// their warp unit): 64 bytes of loads in flight per lane.
constexpr int kBlocksPerLane = 2;

// n / d for 32-bit n without a division: q = (n + umulhi(n, m)) >> s, where 2^32 + m =
// ceil(2^(32 + s) / d) and s = ceil(log2 d) (exact for every n < 2^32, d < 2^31).
struct FastDiv {
  uint32_t d = 1, m = 0, s = 0;
  static FastDiv Of(uint32_t d) {
    FastDiv f;
    f.d = d;
    while ((uint64_t{1} << f.s) < d) ++f.s;
    const uint64_t num = uint64_t{1} << (32 + f.s);
    f.m = static_cast<uint32_t>((num + d - 1) / d - (uint64_t{1} << 32));
    return f;
  }
  __device__ uint32_t Div(uint32_t n) const {
    return static_cast<uint32_t>((uint64_t{n} + __umulhi(n, m)) >> s);
  }
};

struct Nvfp4Params {
  const uint16_t* x;
  int64_t rows, cols;
  int64_t blocks_per_row;  // ceil(cols / 16)
  int64_t packed_cols;     // ceil(cols / 2)
  bool vec_ok;             // cols % 16 == 0 and aligned pointers
  const float* tensor_amax;
  uint8_t* out;
  uint8_t* scales;    // row-major [rows, blocks_per_row], nullable
  uint8_t* swizzled;  // cuBLASLt's 128x4 tiles, nullable
  float* tensor_scale;
  FastDiv grid_cols;  // blocks per row of the walked grid (a multiple of 4 with `swizzled`)
  FastDiv quads;      // with `swizzled`: block quads per row (grid_cols / 4)
  uint32_t total;     // blocks of the walked grid
};

// The encode multiplier r of every decode scale byte (R9: fminf(s / float(sf), FLT_MAX)),
// made once per thread block; sf is never negative or NaN (the block amax is a magnitude,
// the cast saturates), so 128 entries cover it. One shared-memory read per 16 values
// instead of an IEEE division.
struct EncodeTable {
  float r[128];
};

__device__ inline void FillEncodeTable(float s, EncodeTable& t) {
  for (int b = threadIdx.x; b < 128; b += blockDim.x) {
    t.r[b] = b == 0 ? 0.0f : fminf(__fdiv_rn(s, detail::DecodeE4m3(b)), FLT_MAX);
  }
  __syncthreads();
}

// A half block's 8 nibbles by the boundary count, for any input (NaN included). Out of
// line and by value: the common path keeps its registers.
__device__ __noinline__ uint32_t CastHalfWithNan(uint4 v, float r) {
  const uint32_t w[4] = {v.x, v.y, v.z, v.w};
  uint32_t packed = 0;
#pragma unroll
  for (int k = 0; k < 4; ++k) {
    const uint32_t byte = detail::CastE2m1x2(__fmul_rn(detail::LowBf16(w[k]), r),
                                             __fmul_rn(detail::HighBf16(w[k]), r));
    packed |= byte << (8 * k);
  }
  return packed;
}

// A half block's four packed BF16 pairs (8 values, no NaN) -> 8 nibbles. Each
// magnitude code lands in the low 3 bits of its grid float (E2m1MagnitudeOnGrid; |x| r is
// |x r| since IEEE products are sign-symmetric, and the |.| is an operand modifier of the
// product, not an instruction); a pair's two codes become one byte by a multiply-add, and
// four such bytes one word by byte permutes. The sign bits (bit 3 of each nibble) come
// from the inputs: byte 1 of a word holds the low value's sign, byte 3 the high value's.
__device__ __forceinline__ uint32_t CastHalfNoNan(uint4 v, float r) {
  const uint32_t w[4] = {v.x, v.y, v.z, v.w};
  uint32_t pair[4];
#pragma unroll
  for (int k = 0; k < 4; ++k) {
    const float lo = __fmul_rn(fabsf(detail::LowBf16(w[k])), r);
    const float hi = __fmul_rn(fabsf(detail::HighBf16(w[k])), r);
    // Low byte: code_lo + 16 code_hi (codes <= 7, so no carry reaches bit 8).
    pair[k] = __float_as_uint(core::quant::E2m1MagnitudeOnGrid(lo)) +
              __float_as_uint(core::quant::E2m1MagnitudeOnGrid(hi)) * 16u;
  }
  const uint32_t codes = __byte_perm(__byte_perm(pair[0], pair[1], 0x0040),
                                     __byte_perm(pair[2], pair[3], 0x0040), 0x5410);
  // [w0.b1, w1.b1, w0.b3, w1.b3] and the same of w2, w3.
  const uint32_t z01 = __byte_perm(w[0], w[1], 0x7351), z23 = __byte_perm(w[2], w[3], 0x7351);
  const uint32_t low_signs = __byte_perm(z01, z23, 0x5410);   // bit 7 of byte k: value 2k
  const uint32_t high_signs = __byte_perm(z01, z23, 0x7632);  // bit 7 of byte k: value 2k+1
  return codes | ((low_signs >> 4) & 0x08080808u) | (high_signs & 0x80808080u);
}

// The raw packed |x| maximum of a half block (NaN halves above Inf, see AbsBits2).
__device__ __forceinline__ uint32_t HalfMaxRaw(uint4 v) {
  return __vmaxu2(__vmaxu2(detail::AbsBits2(v.x), detail::AbsBits2(v.y)),
                  __vmaxu2(detail::AbsBits2(v.z), detail::AbsBits2(v.w)));
}

// The decode scale byte of a block from the packed |x| maxima of its two halves' words
// (R9): the larger 16-bit half, moved to the top, is the fp32 amax. The cast is the
// paired form with a zero second value, so the result has no bits above the byte.
__device__ __forceinline__ uint32_t BlockScaleByte(uint32_t packed_max, float s) {
  const float amax = __uint_as_float(max(packed_max & 0xFFFF0000u, packed_max << 16));
  const float q = __fmul_rn(core::quant::DivideBf16MagnitudeBy6(amax), s);
  uint32_t pair;
  asm("{\n\t.reg .b16 t;\n\tcvt.rn.satfinite.e4m3x2.f32 t, %1, %2;\n\tcvt.u32.u16 %0, t;\n\t}"
      : "=r"(pair)
      : "f"(0.0f), "f"(q));
  return pair;
}

// A whole block in one lane (its halves in v0 and v1, no NaN in the warp's iteration) given
// its raw packed |x| maximum: the halves' nibbles in *q0 and *q1, the scale byte returned.
__device__ __forceinline__ uint32_t QuantizeBlockNoNan(uint4 v0, uint4 v1, uint32_t raw_max,
                                                       float s, const EncodeTable& t, uint32_t* q0,
                                                       uint32_t* q1) {
  const uint32_t sf = BlockScaleByte(raw_max, s);
  const float r = t.r[sf];
  const uint32_t c0 = CastHalfNoNan(v0, r), c1 = CastHalfNoNan(v1, r);
  *q0 = sf == 0 ? 0u : c0;
  *q1 = sf == 0 ? 0u : c1;
  return sf;
}

// The same for any input: NaN halves count as 0 in the amax (R7), and a block holding a
// NaN takes the boundary count.
__device__ inline uint32_t QuantizeBlockAny(uint4 v0, uint4 v1, uint32_t raw_max, float s,
                                            const EncodeTable& t, uint32_t* q0, uint32_t* q1) {
  const bool nan = detail::HasNan(detail::MaxHalves(raw_max));
  const uint32_t m =
      __vmaxu2(__vmaxu2(__vmaxu2(detail::AbsBitsNoNan2(v0.x), detail::AbsBitsNoNan2(v0.y)),
                        __vmaxu2(detail::AbsBitsNoNan2(v0.z), detail::AbsBitsNoNan2(v0.w))),
               __vmaxu2(__vmaxu2(detail::AbsBitsNoNan2(v1.x), detail::AbsBitsNoNan2(v1.y)),
                        __vmaxu2(detail::AbsBitsNoNan2(v1.z), detail::AbsBitsNoNan2(v1.w))));
  const uint32_t sf = BlockScaleByte(m, s);
  if (sf == 0) {
    *q0 = *q1 = 0;
  } else if (nan) {
    *q0 = CastHalfWithNan(v0, t.r[sf]);
    *q1 = CastHalfWithNan(v1, t.r[sf]);
  } else {
    *q0 = CastHalfNoNan(v0, t.r[sf]);
    *q1 = CastHalfNoNan(v1, t.r[sf]);
  }
  return sf;
}

// What both walks do with a lane's kBlocksPerLane loaded blocks (halves in v[b][0] and
// v[b][1]; zeros outside the tensor): their raw packed |x| maxima in raw[b], and one vote
// for the warp's iteration, returned: whether any lane's blocks hold a NaN. Without one (the
// rule) every block takes QuantizeBlockNoNan, no per-block checks (QuantizeBlock). Every
// lane of the warp calls it.
__device__ __forceinline__ bool RawMaximaAndNanVote(const uint4 (&v)[kBlocksPerLane][2],
                                                    uint32_t (&raw)[kBlocksPerLane]) {
  uint32_t any = 0;
#pragma unroll
  for (int b = 0; b < kBlocksPerLane; ++b) {
    raw[b] = __vmaxu2(HalfMaxRaw(v[b][0]), HalfMaxRaw(v[b][1]));
    any = b == 0 ? raw[b] : __vmaxu2(any, raw[b]);
  }
  return __any_sync(0xFFFFFFFFu, detail::HasNan(detail::MaxHalves(any)));
}

// One block by its iteration's vote `nan` (RawMaximaAndNanVote): the halves' nibbles in *q0
// and *q1, the scale byte returned.
__device__ __forceinline__ uint32_t QuantizeBlock(bool nan, uint4 v0, uint4 v1, uint32_t raw_max,
                                                  float s, const EncodeTable& t, uint32_t* q0,
                                                  uint32_t* q1) {
  return nan ? QuantizeBlockAny(v0, v1, raw_max, s, t, q0, q1)
             : QuantizeBlockNoNan(v0, v1, raw_max, s, t, q0, q1);
}

// Half `h` of block (row, j) of a tensor whose rows are a multiple of 16 long: one
// 16-byte load.
__device__ inline uint4 LoadVector(const Nvfp4Params& p, uint32_t row, uint32_t j, uint32_t h) {
  return __ldg(reinterpret_cast<const uint4*>(p.x + row * p.cols + int64_t{j} * kBlock + h * 8));
}

// Any half block, bounds-checked element by element (ragged rows, misaligned pointers);
// elements past the row end read as zeros.
__device__ inline uint4 LoadScalar(const Nvfp4Params& p, uint32_t row, uint32_t j, uint32_t h) {
  const int64_t col0 = int64_t{j} * kBlock + h * 8;
  const uint16_t* src = p.x + row * p.cols + col0;
  uint32_t w[4];
#pragma unroll
  for (int k = 0; k < 4; ++k) {
    const uint32_t lo = col0 + 2 * k < p.cols ? src[2 * k] : 0u;
    const uint32_t hi = col0 + 2 * k + 1 < p.cols ? src[2 * k + 1] : 0u;
    w[k] = lo | (hi << 16);
  }
  return make_uint4(w[0], w[1], w[2], w[3]);
}

// Block (row, j)'s 8 bytes of nibbles (q0: its first half's, q1: its second's) stored
// byte by byte within the row (ragged rows, misaligned pointers; the kVec walks store the
// 8 bytes at once): an odd row's last high nibble is 0, the element past the end read as
// zero (R4).
__device__ inline void StoreBlockScalar(const Nvfp4Params& p, uint32_t row, uint32_t j, uint32_t q0,
                                        uint32_t q1) {
  const int64_t first = int64_t{j} * (kBlock / 2);  // byte of the row
  uint8_t* dst = p.out + row * p.packed_cols + first;
  const uint32_t q[2] = {q0, q1};
#pragma unroll
  for (int i = 0; i < kBlock / 2; ++i) {
    if (first + i < p.packed_cols) dst[i] = static_cast<uint8_t>(q[i / 4] >> (8 * (i % 4)));
  }
}

// kVec: rows a multiple of 16 long and aligned pointers (16-byte loads, 8-byte stores).
// Five blocks per SM (at most 51 registers): the loads in flight per SM are what keeps
// this kernel near the copy's bandwidth. (Loading the next iteration while quantizing this
// one, at four blocks per SM, gained nothing: the kernel is bound by instruction issue,
// so what is left is the instructions per value.)
//
// Row-major scales only (the launcher takes this walk when there is no swizzle to write,
// so p.scales is set): the grid of blocks as one flat index, kBlocksPerLane grid strides
// per iteration; the warp's lanes take neighbouring blocks.
template <bool kVec>
__global__ void __launch_bounds__(kThreads, 5) Nvfp4Kernel(const Nvfp4Params p) {
  __shared__ EncodeTable table;
  const float s = detail::Nvfp4TensorScale(*p.tensor_amax);
  if (blockIdx.x == 0 && threadIdx.x == 0) *p.tensor_scale = s;
  FillEncodeTable(s, table);
  const uint32_t lane = threadIdx.x % 32;
  const uint32_t blocks = p.total, stride = gridDim.x * kThreads;
  // g0: the warp's first block of the iteration, the same in every lane.
  for (uint32_t g0 = blockIdx.x * kThreads + (threadIdx.x - lane); g0 < blocks;
       g0 += kBlocksPerLane * stride) {
    uint32_t row[kBlocksPerLane], j[kBlocksPerLane];
    bool real[kBlocksPerLane];
    uint4 v[kBlocksPerLane][2];
#pragma unroll
    for (int t = 0; t < kBlocksPerLane; ++t) {
      const uint32_t g = g0 + t * stride + lane;
      row[t] = p.grid_cols.Div(g);
      j[t] = g - row[t] * p.grid_cols.d;
      real[t] = g < blocks;
#pragma unroll
      for (int half = 0; half < 2; ++half) {
        v[t][half] = make_uint4(0u, 0u, 0u, 0u);
        if (real[t]) {
          v[t][half] = kVec ? LoadVector(p, row[t], j[t], half) : LoadScalar(p, row[t], j[t], half);
        }
      }
    }
    uint32_t raw[kBlocksPerLane];
    const bool nan = RawMaximaAndNanVote(v, raw);
#pragma unroll
    for (int t = 0; t < kBlocksPerLane; ++t) {
      uint32_t q0, q1;
      const uint32_t sf = QuantizeBlock(nan, v[t][0], v[t][1], raw[t], s, table, &q0, &q1);
      if (!real[t]) continue;
      if constexpr (kVec) {
        *reinterpret_cast<uint2*>(p.out + row[t] * p.packed_cols + int64_t{j[t]} * (kBlock / 2)) =
            make_uint2(q0, q1);
      } else {
        StoreBlockScalar(p, row[t], j[t], q0, q1);
      }
      p.scales[row[t] * p.blocks_per_row + j[t]] = static_cast<uint8_t>(sf);
    }
  }
}

// With cuBLASLt's swizzle: the walk follows its 512-byte tiles (128 rows x 4 blocks; row r
// of a tile at byte (r % 32) * 16 + (r / 32) * 4 + block), so each warp writes whole
// 32-byte sectors of it (scale lines written a few bytes at a time by warps far apart were
// the swizzled form's extra cost). Warp unit w = (tile row rt, row quad rq, block quad
// jq), jq the fastest (neighbouring warps read neighbouring 128 bytes of the same rows):
// the rows 4 rq + u (u = 0..3) of the tile and, for lane group c = lane / 8, the rows 32 c
// below. Lane 8c + 2 jb + h quantizes block 4 jq + jb of the units u = h and h + 2, whole:
// one scale per block and lane, no amax shuffle (a lane pair's two 16-byte loads of one
// row each take every other 16 bytes of the same sectors; the second finds them in L1).
// The warp unit's scales are 64 bytes in a row of the tile, byte (4 rq + u) * 16 + 4 c +
// jb: a lane and its partner trade their two scale bytes so each holds the four units' of
// its block in a word, and two shuffle rounds transpose those 4 x 4 bytes across the
// lanes jb = 0..3 of a group, after which lane jb holds unit jb's word: one 4-byte store
// per lane pair. The walked grid is the padded one.
template <bool kVec>
__global__ void __launch_bounds__(kThreads, 5) Nvfp4SwizzledKernel(const Nvfp4Params p) {
  static_assert(kBlocksPerLane == 2, "a lane takes the rows h and h + 2 of its warp unit");
  __shared__ EncodeTable table;
  const float s = detail::Nvfp4TensorScale(*p.tensor_amax);
  if (blockIdx.x == 0 && threadIdx.x == 0) *p.tensor_scale = s;
  FillEncodeTable(s, table);
  const uint32_t lane = threadIdx.x % 32, c = lane / 8, jb = (lane / 2) % 4, h = lane % 2;
  // The byte permutes of the scale words (see above): the partner trade, then round 1
  // with jb ^ 2 and round 2 with jb ^ 1.
  const uint32_t trade = h != 0 ? 0x1504u : 0x5140u;
  const uint32_t round1 = (jb & 2) != 0 ? 0x3276u : 0x5410u;
  const uint32_t round2 = (jb & 1) != 0 ? 0x3715u : 0x6240u;
  const uint32_t quads = p.quads.d;     // block quads per row (tiles per tile row)
  const uint32_t units = p.total / 64;  // 64 blocks per warp unit
  const uint32_t warps = gridDim.x * (kThreads / 32);
  for (uint32_t w = blockIdx.x * (kThreads / 32) + threadIdx.x / 32; w < units; w += warps) {
    const uint32_t qd = p.quads.Div(w), jq = w - qd * quads;
    const uint32_t rt = qd / 8, rq = qd % 8;
    const uint32_t j = 4 * jq + jb, row0 = rt * 128 + 4 * rq + 32 * c + h;
    // This lane's blocks: rows row0 and row0 + 2, each inside the tensor or not.
    const bool in_cols = j < p.blocks_per_row;
    const bool real[kBlocksPerLane] = {in_cols && row0 < p.rows, in_cols && row0 + 2 < p.rows};
    const uint16_t* src = p.x + int64_t{row0} * p.cols + int64_t{j} * kBlock;
    uint4 v[kBlocksPerLane][2];
#pragma unroll
    for (int t = 0; t < kBlocksPerLane; ++t) {
#pragma unroll
      for (int half = 0; half < 2; ++half) {
        v[t][half] = make_uint4(0u, 0u, 0u, 0u);
        if (real[t]) {
          v[t][half] = kVec ? __ldg(reinterpret_cast<const uint4*>(src + half * 8))
                            : LoadScalar(p, row0 + 2 * t, j, half);
        }
      }
      src += 2 * p.cols;
    }
    uint32_t raw[kBlocksPerLane];
    const bool nan = RawMaximaAndNanVote(v, raw);
    uint32_t q[kBlocksPerLane][2], sf[kBlocksPerLane];
#pragma unroll
    for (int t = 0; t < kBlocksPerLane; ++t) {
      sf[t] = QuantizeBlock(nan, v[t][0], v[t][1], raw[t], s, table, &q[t][0], &q[t][1]);
    }
    uint8_t* dst = p.out + int64_t{row0} * p.packed_cols + int64_t{j} * (kBlock / 2);
#pragma unroll
    for (int t = 0; t < kBlocksPerLane; ++t) {
      if (real[t]) {
        if constexpr (kVec) {
          *reinterpret_cast<uint2*>(dst) = make_uint2(q[t][0], q[t][1]);
        } else {
          StoreBlockScalar(p, row0 + 2 * t, j, q[t][0], q[t][1]);
        }
        if (p.scales != nullptr) {
          p.scales[(row0 + 2 * t) * p.blocks_per_row + j] = static_cast<uint8_t>(sf[t]);
        }
      }
      dst += 2 * p.packed_cols;
    }
    // Padding blocks loaded zeros, so their scale bytes are already the 0 the swizzle's
    // padding gets. Bytes of `own`: units h, h + 2; of the partner's: 1 - h, 3 - h.
    const uint32_t own = sf[0] | (sf[1] << 8);
    uint32_t word = __byte_perm(own, __shfl_xor_sync(0xFFFFFFFFu, own, 1), trade);
    word = __byte_perm(word, __shfl_xor_sync(0xFFFFFFFFu, word, 4), round1);
    word = __byte_perm(word, __shfl_xor_sync(0xFFFFFFFFu, word, 2), round2);
    if (h == 0) {
      const int64_t tile = (int64_t{rt} * quads + jq) * 512;
      *reinterpret_cast<uint32_t*>(p.swizzled + tile + (4 * rq + jb) * 16 + c * 4) = word;
    }
  }
}

}  // namespace

cudaError_t Nvfp4Quantize(const __nv_bfloat16* x, int64_t rows, int64_t cols,
                          const float* tensor_amax, uint8_t* out, const Nvfp4ScaleOutputs& s,
                          cudaStream_t stream) {
  if (rows < 0 || cols < 0 || tensor_amax == nullptr || s.tensor_scale == nullptr) {
    return cudaErrorInvalidValue;
  }
  const bool empty = rows == 0 || cols == 0;
  if (!empty &&
      (x == nullptr || out == nullptr || (s.scales == nullptr && s.swizzled == nullptr))) {
    return cudaErrorInvalidValue;
  }
  if (!detail::IsAligned(s.swizzled, 4)) return cudaErrorInvalidValue;
  Nvfp4Params p{};
  p.x = reinterpret_cast<const uint16_t*>(x);
  p.rows = rows;
  p.cols = cols;
  p.blocks_per_row = detail::CeilDiv(cols, kBlock);
  p.packed_cols = detail::CeilDiv(cols, 2);
  p.vec_ok = cols % kBlock == 0 && detail::IsAligned(x, 16) && detail::IsAligned(out, 8);
  p.tensor_amax = tensor_amax;
  p.out = out;
  p.scales = s.scales;
  p.swizzled = s.swizzled;
  p.tensor_scale = s.tensor_scale;
  // The walked grid: the swizzle's padded one (an empty tensor has no tiles).
  const int64_t grid_rows = s.swizzled != nullptr ? detail::CeilDiv(rows, 128) * 128 : rows;
  const int64_t grid_cols =
      s.swizzled != nullptr ? detail::CeilDiv(p.blocks_per_row, 4) * 4 : p.blocks_per_row;
  const int64_t total = empty ? 0 : grid_rows * grid_cols;
  // 32-bit block indices (plus the strides' headroom): 2^30 blocks are 16 Gi
  // elements, past any tensor this program quantizes.
  if (total >= (int64_t{1} << 30) || grid_cols >= (int64_t{1} << 30)) return cudaErrorInvalidValue;
  p.grid_cols = FastDiv::Of(static_cast<uint32_t>(std::max<int64_t>(grid_cols, 1)));
  p.total = static_cast<uint32_t>(total);
  // Even an empty tensor gets its tensor scale, so callers can rely on it.
  const unsigned blocks = detail::GridStrideBlocks(total, kThreads * kBlocksPerLane, 8);
  if (p.swizzled != nullptr) {
    p.quads = FastDiv::Of(static_cast<uint32_t>(std::max<int64_t>(grid_cols / 4, 1)));
    (p.vec_ok ? Nvfp4SwizzledKernel<true>
              : Nvfp4SwizzledKernel<false>)<<<blocks, kThreads, 0, stream>>>(p);
  } else {
    (p.vec_ok ? Nvfp4Kernel<true> : Nvfp4Kernel<false>)<<<blocks, kThreads, 0, stream>>>(p);
  }
  return cudaGetLastError();
}

cudaError_t Nvfp4Quantize(const __nv_bfloat16* x, int64_t rows, int64_t cols,
                          const float* tensor_amax, uint8_t* out, uint8_t* scales,
                          float* tensor_scale, cudaStream_t stream) {
  Nvfp4ScaleOutputs s;
  s.scales = scales;
  s.tensor_scale = tensor_scale;
  return Nvfp4Quantize(x, rows, cols, tensor_amax, out, s, stream);
}

}  // namespace gemmprof::kernels
