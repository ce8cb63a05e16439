// Device-side twins of the scalar rules in server/core/quant/quant.h (R1-R9). Every
// function here is the bit-exact counterpart of a host function there; the gpu tests
// in tests/gpu/quant/ hold the two together. Header-only, included by the .cu files of
// this folder only.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp4.h>
#include <cuda_fp8.h>

#include <cfloat>
#include <cstdint>

#include "server/core/quant/quant.h"

namespace gemmprof::kernels::detail {

using core::quant::Fp8Format;

inline constexpr float kE4m3Max = 448.0f;
inline constexpr float kE5m2Max = 57344.0f;
inline constexpr float kE2m1Max = 6.0f;
// The largest |x| of a BF16 as bits of |x| (0x7F80 is +Inf; anything above is NaN).
inline constexpr uint32_t kBf16InfBits = 0x7F80u;

__host__ __device__ inline float Fp8MaxOf(Fp8Format f) {
  return f == Fp8Format::kE4M3 ? kE4m3Max : kE5m2Max;
}

// Two BF16 values packed in a 32-bit word -> the packed |x| bits with NaN halves set to 0.
// The max of these bit patterns is the bit pattern of the fmaxf-max of |x| (R7): BF16
// magnitudes order like unsigned integers, and zero is the identity of the reduction.
__device__ __forceinline__ uint32_t AbsBitsNoNan2(uint32_t packed) {
  const uint32_t abs = packed & 0x7FFF7FFFu;
  const uint32_t is_nan = __vcmpgtu2(abs, (kBf16InfBits << 16) | kBf16InfBits);
  return abs & ~is_nan;
}

// Max of the two halves of a packed-abs word, as 16 significant bits.
__device__ __forceinline__ uint32_t MaxHalves(uint32_t packed_abs) {
  return max(packed_abs & 0xFFFFu, packed_abs >> 16);
}

// BF16 |x| bits (as produced above) -> the fp32 value.
__device__ __forceinline__ float Bf16AbsBitsToFloat(uint32_t bits16) {
  return __uint_as_float(bits16 << 16);
}

__device__ __forceinline__ float LowBf16(uint32_t packed) { return __uint_as_float(packed << 16); }
__device__ __forceinline__ float HighBf16(uint32_t packed) {
  return __uint_as_float(packed & 0xFFFF0000u);
}

// R5: fp8_max / amax in one IEEE division; amax 0 / Inf / NaN -> 1; an infinite
// quotient -> FLT_MAX (also for a negative amax, as the host does).
__device__ __forceinline__ float ScaleFromAmax(float amax, float fp8_max) {
  if (amax == 0.0f || !isfinite(amax)) return 1.0f;
  const float scale = __fdiv_rn(fp8_max, amax);
  return isinf(scale) ? FLT_MAX : scale;
}

// R6: the R5 scale with its mantissa bits cleared.
__device__ __forceinline__ float Pow2ScaleFromAmax(float amax, float fp8_max) {
  return __uint_as_float(__float_as_uint(ScaleFromAmax(amax, fp8_max)) & 0xFF800000u);
}

// fp8-block scale: power of two (R6) or plain (R5).
__device__ __forceinline__ float BlockScaleFromAmax(float amax, bool pow2) {
  return pow2 ? Pow2ScaleFromAmax(amax, kE4m3Max) : ScaleFromAmax(amax, kE4m3Max);
}

// R8: UE8M0 byte = round-up power of two of amax / 448, saturated to [0, 254].
__device__ __forceinline__ uint8_t MxScaleFromAmax(float amax) {
  return __nv_cvt_float_to_e8m0(__fdiv_rn(amax, kE4m3Max), __NV_SATFINITE, cudaRoundPosInf);
}

// R8: the multiplier 2^(127 - b) as an exact fp32 (b = 254 gives the subnormal 2^-127).
__device__ __forceinline__ float MxMultiplier(uint32_t biased) {
  const int e = 127 - static_cast<int>(biased) + 127;  // biased exponent of the multiplier
  return e > 0 ? __uint_as_float(static_cast<uint32_t>(e) << 23) : __uint_as_float(0x00400000u);
}

// R9: NVFP4 tensor scale.
__device__ __forceinline__ float Nvfp4TensorScale(float amax) {
  if (amax == 0.0f || !isfinite(amax)) return 1.0f;
  return fminf(__fdiv_rn(448.0f * 6.0f, amax), FLT_MAX);
}

// Two fp32 -> packed FP8 (first value in the low byte), R1/R2 via the hardware cvt.
__device__ __forceinline__ uint32_t CastFp8x2(float lo, float hi, Fp8Format f) {
  return __nv_cvt_float2_to_fp8x2(make_float2(lo, hi), __NV_SATFINITE,
                                  f == Fp8Format::kE4M3 ? __NV_E4M3 : __NV_E5M2);
}

// Four fp32 -> four FP8 bytes in a word (first value in the lowest byte).
__device__ __forceinline__ uint32_t CastFp8x4(float a, float b, float c, float d, Fp8Format f) {
  return CastFp8x2(a, b, f) | (CastFp8x2(c, d, f) << 16);
}

// A packed pair of BF16 times `scale`, cast to two FP8 bytes (low element first).
__device__ __forceinline__ uint32_t ScaleCastPair(uint32_t packed, float scale, Fp8Format f) {
  return CastFp8x2(__fmul_rn(LowBf16(packed), scale), __fmul_rn(HighBf16(packed), scale), f);
}

// Two packed BF16 pairs (4 values) -> 4 FP8 bytes in one word.
__device__ __forceinline__ uint32_t ScaleCastQuad(uint32_t p0, uint32_t p1, float scale,
                                                  Fp8Format f) {
  return ScaleCastPair(p0, scale, f) | (ScaleCastPair(p1, scale, f) << 16);
}

// R4: two fp32 -> one byte of E2M1 (first value in the low nibble).
__device__ __forceinline__ uint32_t CastE2m1x2(float lo, float hi) {
  return __nv_cvt_float2_to_fp4x2(make_float2(lo, hi), __NV_E2M1, cudaRoundNearest);
}

// An E4M3 byte decoded to fp32 (exact: every E4M3 value is an fp16 value).
__device__ __forceinline__ float DecodeE4m3(uint32_t byte) {
  return __half2float(
      __half(__nv_cvt_fp8_to_halfraw(static_cast<__nv_fp8_storage_t>(byte), __NV_E4M3)));
}

// Max over a warp of unsigned values held by lanes that differ only in `lane_mask` bits.
template <int kFirstMask, int kLastMask>
__device__ __forceinline__ uint32_t ShuffleMax(uint32_t v) {
#pragma unroll
  for (int m = kFirstMask; m <= kLastMask; m <<= 1) {
    v = max(v, __shfl_xor_sync(0xFFFFFFFFu, v, m));
  }
  return v;
}

// The same for packed 2x16-bit values (per-half max).
template <int kFirstMask, int kLastMask>
__device__ __forceinline__ uint32_t ShuffleMax2(uint32_t v) {
#pragma unroll
  for (int m = kFirstMask; m <= kLastMask; m <<= 1) {
    v = __vmaxu2(v, __shfl_xor_sync(0xFFFFFFFFu, v, m));
  }
  return v;
}

// Publishes a non-negative float max with one atomic on its int bits (valid because
// non-negative IEEE floats order like their unsigned bit patterns).
__device__ __forceinline__ void AtomicMaxNonNegative(float* target, float value) {
  atomicMax(reinterpret_cast<unsigned int*>(target), __float_as_uint(value));
}

}  // namespace gemmprof::kernels::detail
