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

// R4's magnitude in arithmetic form: for |x| (not NaN) the float 2^23 + code, where code
// (its low 3 bits) is the E2M1 magnitude code of |x|. On the 2^23 grid an fp32 add rounds
// to an integer, half to even (one rounding: exact), so with r(v) = round(v):
//   code = min(r(2|x|), r(|x|) + 2, r(|x| / 2) + 4, 7)
// (steps of 0.5 below 2, 1 up to 4, 2 above; each term is the right one on its range and
// above the others elsewhere). Three fp32 operations and three minima, no integer work,
// so the NVFP4 quantizer leaves the integer pipe to the loads, signs and packing; checked
// against the host rule for every non-negative non-NaN fp32 (tests/unit/core/quant/
// scale_bits_test.cc samples that check).
GEMMPROF_SCALE_BITS_FN float E2m1MagnitudeOnGrid(float abs_x) {
  constexpr float kGrid = 8388608.0f;  // 2^23
#if defined(__CUDA_ARCH__)
  const float halves = __fmaf_rn(abs_x, 2.0f, kGrid);
  const float ones = __fadd_rn(abs_x, kGrid + 2.0f);
  const float twos = __fmaf_rn(abs_x, 0.5f, kGrid + 4.0f);
  return fminf(fminf(halves, ones), fminf(twos, kGrid + 7.0f));
#else
  const float halves = std::fma(abs_x, 2.0f, kGrid);
  const float ones = abs_x + (kGrid + 2.0f);
  const float twos = std::fma(abs_x, 0.5f, kGrid + 4.0f);
  return std::fmin(std::fmin(halves, ones), std::fmin(twos, kGrid + 7.0f));
#endif
}

}  // namespace gemmprof::core::quant

#undef GEMMPROF_SCALE_BITS_FN
