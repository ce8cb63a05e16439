// Device-side twins of the scalar rules in core/quant/quant.h (R1-R9). Every
// function here is the bit-exact counterpart of a host function there; the gpu tests
// in tests/gpu/quant/ hold the two together. Header-only, included by the .cu files of
// this folder only.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp4.h>
#include <cuda_fp8.h>

#include <cfloat>
#include <cstdint>

#include "core/quant/quant.h"
#include "core/quant/scale_bits.h"

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

// Two BF16 values -> the packed |x| bits, NaN halves kept (they compare above Inf). The
// fast form of the reductions: a max of these is the R7 max unless it exceeds
// kBf16InfBits, in which case some input was NaN and the reduction is redone with
// AbsBitsNoNan2 (HasNan). NaN inputs are rare; the masking costs more than the max.
__device__ __forceinline__ uint32_t AbsBits2(uint32_t packed) { return packed & 0x7FFF7FFFu; }

// Whether a max of AbsBits2 values (one 16-bit half, see MaxHalves) saw a NaN.
__device__ __forceinline__ bool HasNan(uint32_t max16) { return max16 > kBf16InfBits; }

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

// I1 of core/quant/integer_quant.h: clamp to [lo, hi], then round half to even; NaN -> 0.
__device__ __forceinline__ int32_t RoundToInt(float v, float lo, float hi) {
  if (v != v) return 0;
  return __float2int_rn(fminf(fmaxf(v, lo), hi));
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

// The fp8-block scale and its inverse 1 / s (both what the host computes) for an amax that
// is a BF16 magnitude, given as its 16 bits: power-of-two scales from the exponent bits
// (core/quant/scale_bits.h, R6), plain scales and the amaxes outside that form by the
// division (R5).
__device__ __forceinline__ float BlockScaleFromBf16Amax(uint32_t abs16, bool pow2, float* inv) {
  int k = 0;
  if (!pow2 || !core::quant::Pow2BlockScaleExponent(abs16, &k)) {
    const float s = BlockScaleFromAmax(Bf16AbsBitsToFloat(abs16), pow2);
    *inv = __fdiv_rn(1.0f, s);
    return s;
  }
  *inv = __uint_as_float(core::quant::Pow2InverseBits(k));
  return __uint_as_float(core::quant::Pow2Bits(k));
}

// R8: UE8M0 byte = round-up power of two of q = amax / 448, saturated to [0, 254]: the
// rule of __nv_cvt_float_to_e8m0(q, __NV_SATFINITE, cudaRoundPosInf) in integer ops (the
// header emulates it through BF16 on sm_90, which costs more than the cast it scales).
__device__ __forceinline__ uint8_t MxScaleFromAmax(float amax) {
  const uint32_t abs = __float_as_uint(__fdiv_rn(amax, kE4m3Max)) & 0x7FFFFFFFu;
  if (abs > 0x7F800000u) return 0xFF;
  if (abs <= 0x00400000u) return 0;  // up to 2^-127, the smallest UE8M0 value
  const uint32_t biased = abs >> 23;
  if (biased == 0) return 1;  // the rest of the subnormals round up to 2^-126
  return static_cast<uint8_t>(min(biased + ((abs & 0x7FFFFFu) != 0 ? 1u : 0u), 254u));
}

// R8 for an amax that is a BF16 magnitude (its 16 bits): from the exponent bits
// (core/quant/scale_bits.h), by the division outside that form.
__device__ __forceinline__ uint8_t MxScaleFromBf16Amax(uint32_t abs16) {
  uint32_t byte = 0;
  if (!core::quant::MxScaleByteFromExponent(abs16, &byte)) {
    return MxScaleFromAmax(Bf16AbsBitsToFloat(abs16));
  }
  return static_cast<uint8_t>(byte);
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

// The sm_100 conversion instruction (cvt.rn.satfinite.e2m1x2) has not been compared with
// the host reference on a Blackwell GPU (NaN and signed-underflow rules are where it could
// differ), so the exact boundary count below is used on every architecture until a gpu
// test has run there. Set to 1 only with that test passing on sm_100.
#define GEMMPROF_HW_E2M1 0

// R4 on one value: the E2M1 nibble by counting the rounding boundaries |x| passes. The
// boundaries are the midpoints between neighbouring E2M1 values; at a midpoint RNE picks
// the even code, so the comparison is > or >= accordingly. Exact for every fp32 input,
// like the header's software path, at a fraction of its cost.
__device__ __forceinline__ uint32_t E2m1Nibble(float x) {
  const uint32_t bits = __float_as_uint(x);
  const float a = __uint_as_float(bits & 0x7FFFFFFFu);
  if (a != a) return 0x7u;  // NaN -> +6
  const uint32_t code = (a > 0.25f) + (a >= 0.75f) + (a > 1.25f) + (a >= 1.75f) + (a > 2.5f) +
                        (a >= 3.5f) + (a > 5.0f);
  return ((bits >> 28) & 0x8u) | code;
}

// R4: two fp32 -> one byte of E2M1 (first value in the low nibble). Blackwell converts in
// hardware (cvt.rn.satfinite.e2m1x2.f32 via the intrinsic); elsewhere the intrinsic is a
// software emulation through double, and the boundary count above gives the same bits.
__device__ __forceinline__ uint32_t CastE2m1x2(float lo, float hi) {
#if GEMMPROF_HW_E2M1
  return __nv_cvt_float2_to_fp4x2(make_float2(lo, hi), __NV_E2M1, cudaRoundNearest);
#else
  return E2m1Nibble(lo) | (E2m1Nibble(hi) << 4);
#endif
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
