// The w4a16 decode GEMM (w4a16_decode.h).
//
// MMA fragments (mma.sync.m16n8k16, BF16, fp32 accumulation): lane L has g = L / 4 and
// t = L % 4. A (16 tokens x 16 K slots): a0 = (token g, slots 2t, 2t+1), a1 = (token
// g+8, same), a2 = (token g, slots 2t+8, 2t+9), a3 = (token g+8, same). B (16 slots x 8
// weight rows): b0 = (slots 2t, 2t+1; row g), b1 = (slots 2t+8, 2t+9; row g). D: d0, d1 =
// (token g; rows 2t, 2t+1), d2, d3 = (token g+8; same). The sum over K does not care
// which K a slot stands for, so long as A and B agree: in K step s (16 K from 16 s on),
// slots 2t, 2t+1, 2t+8, 2t+9 stand for K 16 s + 4 t + 0, 1, 2, 3. The tokens are staged
// in shared memory so that a0..a3 of a step are one 16-byte load.
//
// The packed weight: per K group and 32 weight rows (a warp's), a chunk of 16 * group
// bytes; chunks group-major ([group][rows / 32]), so the warps of the grid read
// neighbouring chunks at the same time. In a chunk, lane L's u-th piece is the uint4 at
// u * 32 + L; its words x, y hold K step 2u (row tiles 0-1 and 2-3), z, w step 2u + 1.
// Nibble pair p of a word (bits 4p and 16 + 4p, the lower K at 4p) is row tile
// 2 * (word's tile pair) + p / 2, b0 for even p and b1 for odd. A nibble holds q + 8
// (0..15): ORed into 0x4300 it is the BF16 128 + q + 8 = q + 136, exact, and the MMAs
// multiply that; 136 times the tokens' sum over the group is taken off each group's
// fp32 sum before the group's scale (no subtraction per weight).
//
// Each warp streams its chunks through a ring of kStages in shared memory with cp.async
// (a lane copies exactly the pieces it later reads, so copy and use need no barrier).
#include <cooperative_groups.h>

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/w4a16_decode.h"
#include "kernels/quant/device_numerics.cuh"
#include "kernels/quant/launch_utils.cuh"

namespace gemmprof::kernels {
namespace {

constexpr int kWarps = 8;
constexpr int kThreads = kWarps * 32;
constexpr int kWarpRows = 32;                 // weight rows (output columns) per warp
constexpr int kCtaRows = kWarps * kWarpRows;  // per CTA
constexpr int kTokens = 16;                   // the MMA's rows; zero past m
// Chosen by measurement on an H200 (docs/benchmarks.md, "A decode kernel for w4a16"):
constexpr int kStages = 3;           // weight groups a warp has in flight, + 1
constexpr int kMaxSmem = 24 * 1024;  // the activations of a CTA's K range
// The cluster reduction (W4a16Decode::Reduce::kCluster): a cluster of at most this many
// CTAs (16 is beyond the portable 8: the device must allow it), each staging the
// activations of a K range of at most kMaxSmemCluster bytes.
constexpr int kMaxCluster = 16;
constexpr int kMaxSmemCluster = 48 * 1024;
constexpr int kRowPadBytes = 64;     // row stride = 64 mod 128 bytes: no conflicts
constexpr int kCtasPerSm = 3;        // 80 registers: 24 warps per SM
constexpr int kTargetCtasPerSm = 2;  // K is split until the grid has this many
constexpr float kOffset = 136.0f;    // a nibble's BF16 is q + kOffset
constexpr int kFinishThreads = 256;  // FinishKernel's CTA

// The most K groups a split may have: 16 tokens' activations (2 bytes a K) and their sums
// (4 bytes a group) in `cap` bytes of shared memory, after the rows' padding.
constexpr int MaxGroupsPerSplit(int group, int cap) {
  return (cap - kTokens / 2 * kRowPadBytes) / (kTokens * (2 * group + 4));
}
// The passes of 32 lanes that stage a token row pair of such a split (4 K a lane a pass).
constexpr int StagingPasses(int group, int cap) {
  return (MaxGroupsPerSplit(group, cap) * group / 4 + 31) / 32;
}

struct Params {
  const uint16_t* a;
  const uint4* w;
  const uint16_t* scales;
  uint16_t* c;
  float* ws;
  int m, n, k, groups, groups_per_split, splits;
  // 0x000F000F and 0x43004300, passed in so the compiler keeps them in registers: then
  // (x & mask) | magic is one LOP3 (an instruction takes one immediate, not two).
  uint32_t nibble_mask, bf16_128;
};

// Nibble pair p of `word` as BF16 x2: 128 + (q + 8) each, exact.
__device__ __forceinline__ uint32_t NibblePair(uint32_t word, int p, uint32_t mask,
                                               uint32_t magic) {
  uint32_t d;
  asm("lop3.b32 %0, %1, %2, %3, 0xEA;" : "=r"(d) : "r"(word >> (4 * p)), "r"(mask), "r"(magic));
  return d;
}

__device__ __forceinline__ void Mma(float (&d)[4], uint32_t a0, uint32_t a1, uint32_t a2,
                                    uint32_t a3, uint32_t b0, uint32_t b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
      "{%8,%9}, {%0,%1,%2,%3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
}

// 16 bytes global -> shared, asynchronously, not through L1.
__device__ __forceinline__ void CopyAsync16(void* smem, const void* gmem) {
  const uint32_t dst = static_cast<uint32_t>(__cvta_generic_to_shared(smem));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(dst), "l"(gmem) : "memory");
}
__device__ __forceinline__ void CommitCopies() {
  asm volatile("cp.async.commit_group;\n" ::: "memory");
}
// Waits until at most N of this thread's committed copy groups are still in flight.
template <int N>
__device__ __forceinline__ void WaitCopies() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}

__device__ __forceinline__ uint32_t Float2ToBf16x2(float lo, float hi) {
  __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);
  return *reinterpret_cast<uint32_t*>(&v);
}

template <int kGroup, bool kCluster>
__global__ void __launch_bounds__(kThreads, kCtasPerSm) W4a16DecodeKernel(const Params p) {
  constexpr int kU4 = kGroup / 32;  // uint4 per lane per (warp rows, group) chunk: 2 K steps each
  constexpr int kChunk = kU4 * 32;
  extern __shared__ uint4 smem[];
  // Each warp's ring of kStages weight chunks, then the tokens, then their sums.
  char* sa = reinterpret_cast<char*>(smem + kWarps * kStages * kChunk);
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int g = lane / 4, t = lane % 4;
  const int row0 = blockIdx.x * kCtaRows + warp * kWarpRows;  // the warp's weight rows
  const bool active = row0 < p.n;
  const int g0 = blockIdx.y * p.groups_per_split;
  const int g1 = min(p.groups, g0 + p.groups_per_split);
  const int ngroups = g1 - g0;
  const int krange = ngroups * kGroup;
  const int stride = krange * 4 + kRowPadBytes;  // a row: tokens g and g + 8
  // After the tokens: each token's sum over each group of the range (fp32).
  float* asum = reinterpret_cast<float*>(sa + (kTokens / 2) * stride);

  // The first group's weight is requested before the activations are staged.
  const uint4* wp =
      p.w + (static_cast<int64_t>(g0) * (p.n / kWarpRows) + row0 / kWarpRows) * kChunk + lane;
  const int64_t group_stride = static_cast<int64_t>(p.n / kWarpRows) * kChunk;
  // A lane copies the 16-byte pieces it will read itself: no barrier between copy and use.
  uint4* ring = smem + warp * kStages * kChunk + lane;
  const auto issue = [&](int i) {
    const uint4* src = wp + i * group_stride;
    uint4* dst = ring + (i % kStages) * kChunk;
#pragma unroll
    for (int u = 0; u < kU4; ++u) CopyAsync16(dst + u * 32, src + u * 32);
  };
  if (active) {
    for (int i = 0; i < kStages - 1; ++i) {
      if (i < ngroups) issue(i);
      CommitCopies();
    }
  }
  // Shared row g holds tokens g and g + 8 as the MMA's A fragment wants them: per 4 K,
  // 16 bytes (token g K 0-1, token g+8 K 0-1, token g K 2-3, token g+8 K 2-3), one LDS.128
  // per K step. A warp per row; it also sums each token's K over each group (lanes hold
  // consecutive quads, kGroup / 4 of them per group: a shuffle reduction within them).
  // Every load of the row is issued before the first is used: one round trip to L2, not
  // one per 32 quads (the layer's four GEMMs 0.0850 -> 0.0813 ms, H200, M = 16, L2 clean).
  static_assert(kWarps == kTokens / 2);
  {
    constexpr int kQuadsPerGroup = kGroup / 4;  // 32 or 16
    constexpr int kPasses = StagingPasses(kGroup, kCluster ? kMaxSmemCluster : kMaxSmem);
    const int quads = krange / 4;  // <= 32 * kPasses: Create keeps a split's K range in the cap
    const uint2* lo = reinterpret_cast<const uint2*>(p.a + static_cast<int64_t>(warp) * p.k +
                                                     static_cast<int64_t>(g0) * kGroup);
    const uint2* hi = lo + 2 * static_cast<int64_t>(p.k);  // 8 rows on, in uint2
    uint2 xs[kPasses], ys[kPasses];
#pragma unroll
    for (int pass = 0; pass < kPasses; ++pass) {
      const int q = pass * 32 + lane;
      xs[pass] = q < quads && warp < p.m ? __ldg(lo + q) : make_uint2(0, 0);
      ys[pass] = q < quads && warp + 8 < p.m ? __ldg(hi + q) : make_uint2(0, 0);
    }
    uint4* dst = reinterpret_cast<uint4*>(sa + warp * stride);
#pragma unroll
    for (int pass = 0; pass < kPasses; ++pass) {
      if (pass * 32 >= quads) break;
      const int q = pass * 32 + lane;
      const uint2 x = xs[pass], y = ys[pass];
      if (q < quads) dst[q] = make_uint4(x.x, y.x, x.y, y.y);
      const float2 x0 = make_float2(detail::LowBf16(x.x), detail::HighBf16(x.x)),
                   x1 = make_float2(detail::LowBf16(x.y), detail::HighBf16(x.y));
      const float2 y0 = make_float2(detail::LowBf16(y.x), detail::HighBf16(y.x)),
                   y1 = make_float2(detail::LowBf16(y.y), detail::HighBf16(y.y));
      float sx = (x0.x + x0.y) + (x1.x + x1.y), sy = (y0.x + y0.y) + (y1.x + y1.y);
#pragma unroll
      for (int o = kQuadsPerGroup / 2; o > 0; o /= 2) {
        sx += __shfl_xor_sync(0xFFFFFFFFu, sx, o);
        sy += __shfl_xor_sync(0xFFFFFFFFu, sy, o);
      }
      if (q < quads && q % kQuadsPerGroup == 0) {
        asum[warp * ngroups + q / kQuadsPerGroup] = sx;
        asum[(warp + 8) * ngroups + q / kQuadsPerGroup] = sy;
      }
    }
  }
  __syncthreads();

  // The MMAs see q + 136: each group's fp32 sum has 136 times the tokens' sum over the
  // group taken off before the group's scale multiplies it.
  float total[4][4] = {};
  if (active) {
    const char* tokens = sa + g * stride + 16 * t;
    const uint32_t mask = p.nibble_mask, magic = p.bf16_128;
    const float* asum_lo = asum + g * ngroups;
    const float* asum_hi = asum + (g + 8) * ngroups;
    const uint32_t* scale_row =
        reinterpret_cast<const uint32_t*>(p.scales + static_cast<int64_t>(g0) * p.n + row0 + 2 * t);
    const int scale_step = p.n / 2;  // a group's scales, in bf16 pairs
    for (int grp = g0; grp < g1; ++grp, scale_row += scale_step) {
      const int i = grp - g0;
      if (i + kStages - 1 < ngroups) issue(i + kStages - 1);
      CommitCopies();
      WaitCopies<kStages - 1>();  // group i's pieces have landed
      uint4 cur[kU4];
#pragma unroll
      for (int u = 0; u < kU4; ++u) cur[u] = ring[(i % kStages) * kChunk + u * 32];
      uint32_t scale[4];
#pragma unroll
      for (int j = 0; j < 4; ++j) scale[j] = __ldg(scale_row + 4 * j);
      float acc[4][4] = {};
      const int kbyte = i * kGroup * 4;  // 16 bytes per 4 K of a row
#pragma unroll
      for (int u = 0; u < kU4; ++u) {
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          const int s = 2 * u + h;  // K step
          const uint4 a = *reinterpret_cast<const uint4*>(tokens + kbyte + 64 * s);
          const uint32_t w0 = h == 0 ? cur[u].x : cur[u].z;
          const uint32_t w1 = h == 0 ? cur[u].y : cur[u].w;
          Mma(acc[0], a.x, a.y, a.z, a.w, NibblePair(w0, 0, mask, magic),
              NibblePair(w0, 1, mask, magic));
          Mma(acc[1], a.x, a.y, a.z, a.w, NibblePair(w0, 2, mask, magic),
              NibblePair(w0, 3, mask, magic));
          Mma(acc[2], a.x, a.y, a.z, a.w, NibblePair(w1, 0, mask, magic),
              NibblePair(w1, 1, mask, magic));
          Mma(acc[3], a.x, a.y, a.z, a.w, NibblePair(w1, 2, mask, magic),
              NibblePair(w1, 3, mask, magic));
        }
      }
      const float off_lo = kOffset * asum_lo[i], off_hi = kOffset * asum_hi[i];
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        const float s_lo = detail::LowBf16(scale[j]), s_hi = detail::HighBf16(scale[j]);
        total[j][0] = fmaf(acc[j][0] - off_lo, s_lo, total[j][0]);
        total[j][1] = fmaf(acc[j][1] - off_lo, s_hi, total[j][1]);
        total[j][2] = fmaf(acc[j][2] - off_hi, s_lo, total[j][2]);
        total[j][3] = fmaf(acc[j][3] - off_hi, s_hi, total[j][3]);
      }
    }
  }

  if (kCluster || p.splits == 1) {
    // C through shared memory, written in whole rows. With the cluster reduction the
    // splits of a column block are one cluster (gridDim.y of them): each leaves its fp32
    // sums in its own shared memory, then each adds a share of the block's outputs over the
    // cluster's CTAs in rank order (distributed shared memory) and writes it. No workspace,
    // no atomics, and the same sum every launch. Without splits, the CTA's own sums.
    static_assert(kTokens * kCtaRows * 4 <= kWarps * kStages * kChunk * 16,
                  "the sums fit where the weight ring was");
    float* sums = reinterpret_cast<float*>(smem);  // [kTokens][kCtaRows]
    __syncthreads();  // every warp is done with the ring and the tokens
#pragma unroll
    for (int j = 0; j < 4; ++j) {
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        *reinterpret_cast<float2*>(sums + (g + 8 * h) * kCtaRows + warp * kWarpRows + 2 * t +
                                   8 * j) = make_float2(total[j][2 * h], total[j][2 * h + 1]);
      }
    }
    int splits = 1, rank = 0;
    if constexpr (kCluster) {
      cooperative_groups::this_cluster().sync();
      splits = static_cast<int>(cooperative_groups::this_cluster().num_blocks());
      rank = static_cast<int>(cooperative_groups::this_cluster().block_rank());
    } else {
      __syncthreads();
    }
    const int cols = min(kCtaRows, p.n - static_cast<int>(blockIdx.x) * kCtaRows);
    const int quads = cols / 4;
    for (int i = rank * kThreads + threadIdx.x; i < p.m * quads; i += splits * kThreads) {
      const int r = i / quads, at = r * kCtaRows + (i % quads) * 4;
      float4 s = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
      for (int src = 0; src < splits; ++src) {
        const float* from = sums;
        if constexpr (kCluster)
          from = cooperative_groups::this_cluster().map_shared_rank(sums, src);
        const float4 v = *reinterpret_cast<const float4*>(from + at);
        s.x += v.x;
        s.y += v.y;
        s.z += v.z;
        s.w += v.w;
      }
      const int64_t n = static_cast<int64_t>(blockIdx.x) * kCtaRows + (i % quads) * 4;
      *reinterpret_cast<uint2*>(p.c + r * static_cast<int64_t>(p.n) + n) =
          make_uint2(Float2ToBf16x2(s.x, s.y), Float2ToBf16x2(s.z, s.w));
    }
    if constexpr (kCluster)
      cooperative_groups::this_cluster().sync();  // no CTA leaves while another reads its sums
    return;
  }

  // Several splits (atomic reduction): the splits add their fp32 sums into the workspace
  // (in L2) and leave; FinishKernel, launched after this grid as its programmatic
  // dependent, writes C from the workspace and zeroes it. (Each split storing its own
  // slice, the last one adding them in order, measured slower: 0.0265 against 0.0205 ms on
  // 16x14336x4096, the final sum of 23 slices being one CTA's latency. The last CTA of a
  // column block, counted by an atomic, writing C itself measured slower too: every CTA
  // then waits for its atomics to land before it counts, and the last one's loads end the
  // grid. Side by side on an H200, M = 16, L2 clean, the layer's four GEMMs took 0.0815 ms
  // that way and 0.0736 this way.) The atomics are 16 bytes: lanes t and t ^ 1 swap
  // halves, so that each holds 4 neighbouring columns of one token.
  // The dependent grid may start now: its CTAs wait (griddepcontrol.wait) until this grid
  // has ended and its atomics are visible.
  asm volatile("griddepcontrol.launch_dependents;\n" ::: "memory");
  if (!active) return;
  const bool odd = t & 1;
#pragma unroll
  for (int j = 0; j < 4; ++j) {
    // Even t keeps token g's columns 2t..2t+1 and takes 2t+2..2t+3 from t + 1; odd t
    // keeps token g + 8's 2t..2t+1 and takes 2t-2..2t-1 from t - 1.
    const float give0 = odd ? total[j][0] : total[j][2];
    const float give1 = odd ? total[j][1] : total[j][3];
    const float got0 = __shfl_xor_sync(0xFFFFFFFFu, give0, 1);
    const float got1 = __shfl_xor_sync(0xFFFFFFFFu, give1, 1);
    const int r = odd ? g + 8 : g;
    if (r >= p.m) continue;
    const int64_t n = row0 + 2 * (t & ~1) + 8 * j;
    atomicAdd(reinterpret_cast<float4*>(p.ws + r * static_cast<int64_t>(p.n) + n),
              odd ? make_float4(got0, got1, total[j][2], total[j][3])
                  : make_float4(total[j][0], total[j][1], got0, got1));
  }
}

// The atomic reduction's second launch: C[i] = the workspace's fp32 sum, which it zeroes
// for the next launch. A programmatic dependent of the decode kernel: launched while that
// one ends, it waits here until the decode grid has completed and its atomics are visible.
__global__ void __launch_bounds__(kFinishThreads)
    FinishKernel(float* __restrict__ ws, uint16_t* __restrict__ c, int64_t quads) {
  asm volatile("griddepcontrol.wait;\n" ::: "memory");
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < quads;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    float4* src = reinterpret_cast<float4*>(ws) + i;
    const float4 v = __ldcg(src);
    reinterpret_cast<uint2*>(c)[i] = make_uint2(Float2ToBf16x2(v.x, v.y), Float2ToBf16x2(v.z, v.w));
    __stcg(src, make_float4(0.0f, 0.0f, 0.0f, 0.0f));
  }
}

// One thread per uint4 of the packed weight (see the top of the file).
__global__ void PackKernel(const uint8_t* __restrict__ src, uint4* __restrict__ out, int64_t n,
                           int64_t k, int64_t group) {
  const int64_t u4 = group / 32, groups = k / group;
  const int64_t total = n / kWarpRows * groups * u4 * 32;
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= total) return;
  const int lane = static_cast<int>(i % 32);
  const int64_t u = (i / 32) % u4, block = (i / (32 * u4)) % (n / kWarpRows);
  const int64_t grp = i / (32 * u4 * (n / kWarpRows));
  const int g = lane / 4, t = lane % 4;
  const auto nibble = [&](int64_t row, int64_t kk) -> uint32_t {
    const uint32_t byte = src[row * (k / 2) + kk / 2];
    return ((kk % 2 == 0 ? byte : byte >> 4) & 0xFu) ^ 0x8u;  // q + 8
  };
  uint32_t words[4];
  for (int c = 0; c < 4; ++c) {
    const int64_t s = 2 * u + c / 2;  // K step; c % 2: row tiles 0-1 or 2-3
    uint32_t word = 0;
    for (int pr = 0; pr < 4; ++pr) {
      const int64_t row = block * kWarpRows + 8 * (2 * (c % 2) + pr / 2) + g;
      const int64_t kk = grp * group + 16 * s + 4 * t + 2 * (pr % 2);
      word |= nibble(row, kk) << (4 * pr) | nibble(row, kk + 1) << (16 + 4 * pr);
    }
    words[c] = word;
  }
  out[i] = make_uint4(words[0], words[1], words[2], words[3]);
}

template <int kGroup, bool kCluster>
const void* KernelFor() {
  return reinterpret_cast<const void*>(&W4a16DecodeKernel<kGroup, kCluster>);
}

const void* KernelFor(int64_t group, bool cluster) {
  if (group == 64) return cluster ? KernelFor<64, true>() : KernelFor<64, false>();
  return cluster ? KernelFor<128, true>() : KernelFor<128, false>();
}

}  // namespace

std::string W4a16Decode::Unsupported(const W4a16DecodeProblem& p, int sm) {
  const std::string size = absl::StrCat(p.m, "x", p.k, "x", p.n);
  if (sm < 90)
    return absl::StrCat("w4a16 decode kernel: built for sm_90 and later; this is sm_", sm);
  if (p.m < 1 || p.m > kMaxTokens) {
    return absl::StrCat("w4a16 decode kernel: takes 1 to ", kMaxTokens,
                        " tokens (a decode step); M = ", p.m);
  }
  if (p.group != 64 && p.group != 128) {
    return absl::StrCat("w4a16 decode kernel: groups of 64 or 128; this is ", p.group);
  }
  if (p.k < 1 || p.k % p.group != 0) {
    return absl::StrCat("w4a16 decode kernel: K a multiple of the group (", p.group, "); ", size);
  }
  if (p.n < 1 || p.n % kWarpRows != 0) {
    return absl::StrCat("w4a16 decode kernel: N a multiple of ", kWarpRows, "; ", size);
  }
  if (p.n * p.k / 2 > (int64_t{1} << 40) || p.k > (1 << 30) || p.n > (1 << 30)) {
    return absl::StrCat("w4a16 decode kernel: ", size, " is too large");
  }
  if (reinterpret_cast<uintptr_t>(p.a) % 16 != 0) {
    return "w4a16 decode kernel: the activations must start on 16 bytes";
  }
  return "";
}

absl::StatusOr<W4a16Decode> W4a16Decode::Create(const W4a16DecodeProblem& p, int device, int sm,
                                                int sm_count, cudaStream_t stream, Reduce reduce) {
  if (const std::string why = Unsupported(p, sm); !why.empty()) {
    return absl::FailedPreconditionError(why);
  }
  const bool cluster = reduce == Reduce::kCluster;
  W4a16Decode d;
  d.p_ = p;
  d.reduce_ = reduce;
  // Two CTAs per SM if K has groups enough (two per split at least); more splits where
  // the activations of a split's K range would not fit the shared memory.
  const int64_t blocks = (p.n + kCtaRows - 1) / kCtaRows, groups = p.k / p.group;
  // Per group of a split: 16 tokens' activations and their 16 sums.
  const int64_t max_per_split =
      MaxGroupsPerSplit(static_cast<int>(p.group), cluster ? kMaxSmemCluster : kMaxSmem);
  int64_t splits = std::clamp<int64_t>((kTargetCtasPerSm * sm_count + blocks - 1) / blocks, 1,
                                       std::max<int64_t>(1, groups / 2));
  if (cluster) splits = std::min<int64_t>(splits, kMaxCluster);
  splits = std::max(splits, (groups + max_per_split - 1) / max_per_split);
  const int64_t per_split = (groups + splits - 1) / splits;
  d.groups_per_split_ = static_cast<int>(per_split);
  d.splits_ = static_cast<int>((groups + per_split - 1) / per_split);
  if (cluster && d.splits_ > kMaxCluster) {
    return absl::FailedPreconditionError(absl::StrCat(
        "w4a16 decode kernel, cluster reduction: K = ", p.k, " needs ", d.splits_,
        " splits for its activations to fit shared memory; a cluster holds ", kMaxCluster));
  }
  d.smem_bytes_ = static_cast<size_t>(kWarps * kStages * kWarpRows * p.group / 2 +
                                      kTokens / 2 * (per_split * p.group * 4 + kRowPadBytes) +
                                      kTokens * per_split * 4);

  CUDA_RETURN_IF_ERROR(cudaSetDevice(device));
  const void* kernel = KernelFor(p.group, cluster);
  int optin = 0;
  CUDA_RETURN_IF_ERROR(
      cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  if (d.smem_bytes_ + 64 > static_cast<size_t>(optin)) {
    return absl::FailedPreconditionError(
        absl::StrCat("w4a16 decode kernel: needs ", d.smem_bytes_,
                     " B of shared memory per CTA; the device has ", optin));
  }
  // The largest a launch may ask (not this instance's: another may need more).
  CUDA_RETURN_IF_ERROR(
      cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, optin - 64));
  if (cluster) {
    // A cluster of more than 8 CTAs is not portable: the device must allow it, and the
    // CTAs of one must fit one GPC at once.
    CUDA_RETURN_IF_ERROR(
        cudaFuncSetAttribute(kernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
    cudaLaunchConfig_t config = d.LaunchConfig(nullptr);
    cudaLaunchAttribute attribute = d.ClusterAttribute();
    config.attrs = &attribute;
    config.numAttrs = 1;
    int clusters = 0;
    if (cudaOccupancyMaxActiveClusters(&clusters, kernel, &config) != cudaSuccess || clusters < 1) {
      (void)cudaGetLastError();
      return absl::FailedPreconditionError(
          absl::StrCat("w4a16 decode kernel, cluster reduction: a cluster of ", d.splits_,
                       " CTAs does not fit this device"));
    }
  }
  const size_t packed_bytes = static_cast<size_t>(p.n * p.k / 2);
  if (cudaMalloc(&d.packed_, packed_bytes) != cudaSuccess) {
    (void)cudaGetLastError();
    return absl::ResourceExhaustedError(
        absl::StrCat("w4a16 decode kernel: allocating the packed weight (", packed_bytes, " B)"));
  }
  if (d.splits_ > 1 && !cluster) {
    const size_t ws = static_cast<size_t>(p.m * p.n) * sizeof(float);
    if (cudaMalloc(&d.workspace_, ws) != cudaSuccess) {
      (void)cudaGetLastError();
      return absl::ResourceExhaustedError("w4a16 decode kernel: allocating the split-K workspace");
    }
    CUDA_RETURN_IF_ERROR(cudaMemsetAsync(d.workspace_, 0, ws, stream));
    // FinishKernel: a float4 a thread, at most 4 CTAs per SM (then a grid-stride loop).
    d.finish_ctas_ = static_cast<int>(std::min<int64_t>(
        (p.m * p.n / 4 + kFinishThreads - 1) / kFinishThreads, int64_t{4} * sm_count));
  }
  const int64_t pieces = static_cast<int64_t>(packed_bytes / 16);
  PackKernel<<<static_cast<unsigned>((pieces + 255) / 256), 256, 0, stream>>>(
      static_cast<const uint8_t*>(p.w), static_cast<uint4*>(d.packed_), p.n, p.k, p.group);
  CUDA_RETURN_IF_LAUNCH_ERROR();
  return d;
}

cudaError_t W4a16Decode::Run(cudaStream_t stream) const {
  Params k;
  k.a = reinterpret_cast<const uint16_t*>(p_.a);
  k.w = static_cast<const uint4*>(packed_);
  k.scales = reinterpret_cast<const uint16_t*>(p_.scales);
  k.c = reinterpret_cast<uint16_t*>(p_.c);
  k.ws = workspace_;
  k.m = static_cast<int>(p_.m);
  k.n = static_cast<int>(p_.n);
  k.k = static_cast<int>(p_.k);
  k.groups = static_cast<int>(p_.k / p_.group);
  k.groups_per_split = groups_per_split_;
  k.splits = splits_;
  k.nibble_mask = 0x000F000Fu;
  k.bf16_128 = 0x43004300u;
  cudaLaunchConfig_t config = LaunchConfig(stream);
  cudaLaunchAttribute attribute = ClusterAttribute();
  if (reduce_ == Reduce::kCluster) {
    config.attrs = &attribute;
    config.numAttrs = 1;
  }
  void* args[] = {&k};
  const cudaError_t launched =
      cudaLaunchKernelExC(&config, KernelFor(p_.group, reduce_ == Reduce::kCluster), args);
  if (launched != cudaSuccess || reduce_ == Reduce::kCluster || splits_ == 1) return launched;
  // The atomic reduction's second launch, a programmatic dependent of the first: it is
  // launched while the first ends and waits in the kernel for it to complete.
  return detail::LaunchDependent(
      FinishKernel, dim3(static_cast<unsigned>(finish_ctas_)), dim3(kFinishThreads), stream,
      workspace_, reinterpret_cast<uint16_t*>(p_.c), static_cast<int64_t>(p_.m * p_.n / 4));
}

cudaLaunchConfig_t W4a16Decode::LaunchConfig(cudaStream_t stream) const {
  cudaLaunchConfig_t config = {};
  config.gridDim =
      dim3(static_cast<unsigned>((p_.n + kCtaRows - 1) / kCtaRows), static_cast<unsigned>(splits_));
  config.blockDim = dim3(kThreads);
  config.dynamicSmemBytes = smem_bytes_;
  config.stream = stream;
  return config;
}

cudaLaunchAttribute W4a16Decode::ClusterAttribute() const {
  cudaLaunchAttribute attribute = {};
  attribute.id = cudaLaunchAttributeClusterDimension;
  attribute.val.clusterDim.x = 1;
  attribute.val.clusterDim.y = static_cast<unsigned>(splits_);
  attribute.val.clusterDim.z = 1;
  return attribute;
}

std::string W4a16Decode::Config() const {
  return absl::StrCat(
      kCtaRows, " weight rows x ", kTokens, " tokens per CTA, mma.sync m16n8k16, K ",
      splits_ == 1 ? std::string("whole per CTA") : absl::StrCat("split ", splits_, " ways"), " (",
      groups_per_split_, " groups of ", p_.group, " per CTA)",
      splits_ == 1                  ? ""
      : reduce_ == Reduce::kCluster ? ", splits added in a cluster"
                                    : ", splits added by atomics, C written by a second launch");
}

W4a16Decode::W4a16Decode(W4a16Decode&& o) noexcept { *this = std::move(o); }

W4a16Decode& W4a16Decode::operator=(W4a16Decode&& o) noexcept {
  if (this != &o) {
    Release();
    p_ = o.p_;
    packed_ = std::exchange(o.packed_, nullptr);
    workspace_ = std::exchange(o.workspace_, nullptr);
    splits_ = o.splits_;
    finish_ctas_ = o.finish_ctas_;
    reduce_ = o.reduce_;
    groups_per_split_ = o.groups_per_split_;
    smem_bytes_ = o.smem_bytes_;
  }
  return *this;
}

W4a16Decode::~W4a16Decode() { Release(); }

void W4a16Decode::Release() {
  if (packed_ != nullptr) (void)cudaFree(packed_);
  if (workspace_ != nullptr) (void)cudaFree(workspace_);
  packed_ = nullptr;
  workspace_ = nullptr;
}

}  // namespace gemmprof::kernels
