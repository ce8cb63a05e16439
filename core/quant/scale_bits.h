// Two scale rules of core/quant/quant.h in their exponent-bit form, for amaxes that are
// BF16 magnitudes (every amax the kernels reduce is one): the CUDA quantization kernels
// use them instead of IEEE divisions, and tests/unit/core/quant/scale_bits_test.cc holds
// them to the host rules over every BF16 magnitude. Header-only, host and device.
//
// An amax = m x 2^e has a 7-bit mantissa m in [1, 2) (fraction bits f, m = 1 + f / 128).
//  - R6, the power-of-two fp8-block scale: 448 / amax = (1.75 / m) x 2^(8 - e) rounds to
//    [1, 1.75] x 2^(8 - e) when m <= 1.75 (f <= 96) and to (0.87, 0.996] x 2^(8 - e) when
//    m > 1.75 (m >= 1.7578125), so R6 keeps 2^(8 - e) or 2^(7 - e); past 2^127 the
//    quotient is FLT_MAX or infinite and R6 gives 2^127.
//  - R8, the UE8M0 byte: amax / 448 = (m / 1.75) x 2^(e - 8) is exactly 2^(e - 8) when
//    m = 1.75, just below it when m < 1.75 (rounded up to 2^(e - 8)) and at least 1.0045
//    times it when m > 1.75 (rounded up to 2^(e - 7)): the byte is the biased exponent
//    minus 8 or 7.
// Each returns false where its form does not apply (zero, subnormal, infinite or NaN
// amaxes; for R8 also amaxes below 2^-111, whose quotient is subnormal): the caller then
// divides as the rule says.
// Also R4's E2M1 rounding in arithmetic form (E2m1MagnitudeOnGrid), which the NVFP4
// quantizer uses in place of counting the rounding boundaries.
#pragma once

#include <cstdint>
#if !defined(__CUDA_ARCH__)
#include <cmath>
#endif

#if defined(__CUDACC__)
#define GEMMPROF_SCALE_BITS_FN __host__ __device__ __forceinline__
#else
#define GEMMPROF_SCALE_BITS_FN inline
#endif

namespace gemmprof::core::quant {

// R6 for the BF16 magnitude `abs16`: *k with the scale 2^k (k in [-120, 127]).
GEMMPROF_SCALE_BITS_FN bool Pow2BlockScaleExponent(uint32_t abs16, int* k) {
  const uint32_t biased = abs16 >> 7;
  if (biased == 0 || biased >= 0xFF) return false;
  const int e = static_cast<int>(biased) - 127;
  const int exp = ((abs16 & 0x7Fu) <= 96u ? 8 : 7) - e;
  *k = exp < 127 ? exp : 127;
  return true;
}

// fp32 bits of 2^k and of its exact inverse 2^-k (2^-127 is the subnormal 0x00400000).
GEMMPROF_SCALE_BITS_FN uint32_t Pow2Bits(int k) { return static_cast<uint32_t>(k + 127) << 23; }
GEMMPROF_SCALE_BITS_FN uint32_t Pow2InverseBits(int k) {
  return k == 127 ? 0x00400000u : static_cast<uint32_t>(127 - k) << 23;
}

// R8 for the BF16 magnitude `abs16`: the UE8M0 byte.
GEMMPROF_SCALE_BITS_FN bool MxScaleByteFromExponent(uint32_t abs16, uint32_t* byte) {
  const uint32_t biased = abs16 >> 7;
  if (biased < 16 || biased >= 0xFF) return false;
  *byte = biased - ((abs16 & 0x7Fu) > 96u ? 7u : 8u);
  return true;
}

// R9's first step, block_amax / 6 in IEEE fp32, for an amax that is a BF16 magnitude (every
// block amax is one): a product by fp32(1/6) and one fma correction give the quotient's
// bits for every finite non-negative BF16 (checked over all of them in scale_bits_test);
// +Inf stays +Inf. Five fp32 operations where the division takes a dozen and a branch.
GEMMPROF_SCALE_BITS_FN float DivideBf16MagnitudeBy6(float amax) {
  constexpr float kSixth = 1.0f / 6.0f;
#if defined(__CUDA_ARCH__)
  const float q0 = __fmul_rn(amax, kSixth);
  const float corrected = __fmaf_rn(__fmaf_rn(-q0, 6.0f, amax), kSixth, q0);
#else
  const float q0 = amax * kSixth;
  const float corrected = std::fma(std::fma(-q0, 6.0f, amax), kSixth, q0);
#endif
  return amax > 3.40282347e+38f ? amax : corrected;  // +Inf
}

// fp32 x * y and fma(x, y, z), each rounded once and then clamped to [0, 1] (NaN to 0):
// PTX's .sat forms, which run on the fp32 pipe like the plain ones.
#if defined(__CUDA_ARCH__)
__device__ __forceinline__ float MulSat(float x, float y) {
  float d;
  asm("mul.rn.sat.f32 %0, %1, %2;" : "=f"(d) : "f"(x), "f"(y));
  return d;
}
__device__ __forceinline__ float FmaSat(float x, float y, float z) {
  float d;
  asm("fma.rn.sat.f32 %0, %1, %2, %3;" : "=f"(d) : "f"(x), "f"(y), "f"(z));
  return d;
}
#else
inline float Saturate(float v) { return v > 0.0f ? (v < 1.0f ? v : 1.0f) : 0.0f; }
inline float MulSat(float x, float y) { return Saturate(x * y); }
inline float FmaSat(float x, float y, float z) { return Saturate(std::fma(x, y, z)); }
#endif

// R4's magnitude in arithmetic form: for |x| = a (not NaN) the float 2^23 + code, where
// code (its low 3 bits) is the E2M1 magnitude code of a. The code is the rounding, half to
// even, of the piecewise-linear y(a) = 4 u1 + 2 u2 + u3 with u1 = sat(a / 2),
// u2 = sat(a / 2 - 1), u3 = sat(a / 2 - 2) (sat: clamp to [0, 1]): slope 2 below 2, 1 up
// to 4, 1/2 up to 6 and flat above, so y maps the E2M1 values 0, 0.5, 1, 1.5, 2, 3, 4, 6
// to 0..7 and their midpoints to the half-integers between. Each u is exact where it is
// strictly between 0 and 1 (a / 2 - k is then a difference within a factor of two). The
// sum is rounded on the 2^23 grid, where an fp32 add rounds to an integer half to even,
// term by term: u2 > 0 only when u1 = 1 and u3 > 0 only when u2 = 1, so every partial sum
// a later term lands on is the even 4 or 6 and the ties go where one rounding of y sends
// them. Seven fp32-pipe operations (the product r x counted) and no minima, comparisons
// or integer work, which would share the integer pipe with the loads, signs and packing.
// Checked against the host rule for every non-negative non-NaN fp32 (tests/unit/core/
// quant/scale_bits_test.cc samples that check).
GEMMPROF_SCALE_BITS_FN float E2m1MagnitudeOnGrid(float abs_x) {
  constexpr float kGrid = 8388608.0f;  // 2^23
  const float u1 = MulSat(abs_x, 0.5f);
  const float u2 = FmaSat(abs_x, 0.5f, -1.0f);
  const float u3 = FmaSat(abs_x, 0.5f, -2.0f);
#if defined(__CUDA_ARCH__)
  return __fadd_rn(__fmaf_rn(u2, 2.0f, __fmaf_rn(u1, 4.0f, kGrid)), u3);
#else
  return std::fma(u2, 2.0f, std::fma(u1, 4.0f, kGrid)) + u3;
#endif
}

}  // namespace gemmprof::core::quant

#undef GEMMPROF_SCALE_BITS_FN
