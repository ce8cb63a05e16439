// Nvfp4Quantize: E2M1 data, one E4M3 decode scale per 1x16 block and an fp32 tensor
// scale (R9). A thread owns whole 16-element blocks, so a block's amax never leaves the
// thread; rows whose length is a multiple of 16 are one flat array of blocks.
#include <cfloat>
#include <cstdint>

#include "kernels/quant/device_numerics.cuh"
#include "kernels/quant/launch_utils.cuh"
#include "kernels/quant/quantize.h"

namespace gemmprof::kernels {
namespace {

constexpr int kThreads = 256;
constexpr int kBlock = 16;  // elements per NVFP4 block
// Blocks per thread and iteration: 64 bytes of loads in flight per thread.
constexpr int kUnroll = 2;

struct Nvfp4Params {
  const uint16_t* x;
  int64_t rows, cols;
  int64_t blocks_per_row;  // ceil(cols / 16)
  int64_t packed_cols;     // ceil(cols / 2)
  bool vec_ok;             // cols % 16 == 0 and aligned pointers
  const float* tensor_amax;
  uint8_t* out;
  uint8_t* scales;
  float* tensor_scale;
};

// Quantizes one block of 8 packed BF16 pairs: 8 bytes of nibbles and the scale byte.
__device__ inline uint2 QuantizeBlock16(const uint32_t (&w)[8], float s, uint8_t* scale_byte) {
  uint32_t m = 0;
#pragma unroll
  for (int k = 0; k < 8; ++k) m = __vmaxu2(m, detail::AbsBitsNoNan2(w[k]));
  const float block_amax = detail::Bf16AbsBitsToFloat(detail::MaxHalves(m));
  const uint32_t sf =
      __nv_cvt_float_to_fp8(__fmul_rn(__fdiv_rn(block_amax, 6.0f), s), __NV_SATFINITE, __NV_E4M3);
  *scale_byte = static_cast<uint8_t>(sf);
  if (sf == 0) return make_uint2(0u, 0u);
  const float r = fminf(__fdiv_rn(s, detail::DecodeE4m3(sf)), FLT_MAX);
  uint32_t packed[2] = {0u, 0u};
#pragma unroll
  for (int k = 0; k < 8; ++k) {
    const uint32_t byte = detail::CastE2m1x2(__fmul_rn(detail::LowBf16(w[k]), r),
                                             __fmul_rn(detail::HighBf16(w[k]), r));
    packed[k / 4] |= byte << (8 * (k % 4));
  }
  return make_uint2(packed[0], packed[1]);
}

// Block `g` of a tensor whose rows are a multiple of 16 long: 16-byte loads, one 8-byte
// store.
__device__ inline void VectorBlock(const Nvfp4Params& p, int64_t g, float s) {
  const auto* src = reinterpret_cast<const uint4*>(p.x + g * kBlock);
  const uint4 a = __ldg(src), b = __ldg(src + 1);
  const uint32_t w[8] = {a.x, a.y, a.z, a.w, b.x, b.y, b.z, b.w};
  uint8_t sf;
  const uint2 q = QuantizeBlock16(w, s, &sf);
  *reinterpret_cast<uint2*>(p.out + g * (kBlock / 2)) = q;
  p.scales[g] = sf;
}

// Any block, bounds-checked element by element (ragged rows, misaligned pointers).
__device__ inline void ScalarBlock(const Nvfp4Params& p, int64_t g, float s) {
  const int64_t row = g / p.blocks_per_row, j = g % p.blocks_per_row;
  const int64_t col0 = j * kBlock;
  const uint16_t* src = p.x + row * p.cols + col0;
  uint32_t w[8];
#pragma unroll
  for (int k = 0; k < 8; ++k) {
    const uint32_t lo = col0 + 2 * k < p.cols ? src[2 * k] : 0u;
    const uint32_t hi = col0 + 2 * k + 1 < p.cols ? src[2 * k + 1] : 0u;
    w[k] = lo | (hi << 16);
  }
  uint8_t sf;
  const uint2 q = QuantizeBlock16(w, s, &sf);
  // Elements past the row end were zeros, so an odd row's last high nibble is 0 (R4).
  uint8_t* dst = p.out + row * p.packed_cols + j * (kBlock / 2);
#pragma unroll
  for (int i = 0; i < 8; ++i) {
    if (j * (kBlock / 2) + i < p.packed_cols) {
      dst[i] = static_cast<uint8_t>((i < 4 ? q.x : q.y) >> (8 * (i % 4)));
    }
  }
  p.scales[g] = sf;
}

__global__ void __launch_bounds__(kThreads) Nvfp4Kernel(const Nvfp4Params p) {
  const float s = detail::Nvfp4TensorScale(*p.tensor_amax);
  if (blockIdx.x == 0 && threadIdx.x == 0) *p.tensor_scale = s;
  const int64_t total = p.rows * p.blocks_per_row;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * kThreads;
  int64_t g = static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x;
  if (p.vec_ok) {
    for (; g + (kUnroll - 1) * stride < total; g += kUnroll * stride) {
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) VectorBlock(p, g + u * stride, s);
    }
    for (; g < total; g += stride) VectorBlock(p, g, s);
  } else {
    for (; g < total; g += stride) ScalarBlock(p, g, s);
  }
}

}  // namespace

cudaError_t Nvfp4Quantize(const __nv_bfloat16* x, int64_t rows, int64_t cols,
                          const float* tensor_amax, uint8_t* out, uint8_t* scales,
                          float* tensor_scale, cudaStream_t stream) {
  if (rows < 0 || cols < 0 || tensor_amax == nullptr || tensor_scale == nullptr) {
    return cudaErrorInvalidValue;
  }
  const bool empty = rows == 0 || cols == 0;
  if (!empty && (x == nullptr || out == nullptr || scales == nullptr)) {
    return cudaErrorInvalidValue;
  }
  Nvfp4Params p{reinterpret_cast<const uint16_t*>(x),
                rows,
                cols,
                detail::CeilDiv(cols, kBlock),
                detail::CeilDiv(cols, 2),
                false,
                tensor_amax,
                out,
                scales,
                tensor_scale};
  p.vec_ok = cols % kBlock == 0 && detail::IsAligned(x, 16) && detail::IsAligned(out, 8);
  // Even an empty tensor gets its tensor scale, so callers can rely on it.
  const unsigned blocks =
      detail::GridStrideBlocks(p.rows * p.blocks_per_row, kThreads * kUnroll, 8);
  Nvfp4Kernel<<<blocks, kThreads, 0, stream>>>(p);
  return cudaGetLastError();
}

}  // namespace gemmprof::kernels
