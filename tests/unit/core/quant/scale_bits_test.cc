// core/quant/scale_bits.h, the exponent-bit forms the CUDA kernels use, against the host
// rules of core/quant/quant.h over every BF16 magnitude: where a form applies it gives the
// rule's bits exactly, and it applies to every normal finite amax (R6) or every one from
// 2^-111 up (R8), so the kernels divide only for the amaxes the comment names.
#include "core/quant/scale_bits.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>

#include "core/quant/quant.h"

namespace gemmprof::core::quant {
namespace {

float FromBits(uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, sizeof(f));
  return f;
}

uint32_t Bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof(u));
  return u;
}

TEST(ScaleBits, Pow2BlockScaleEqualsTheDividingRuleForEveryBf16Amax) {
  int applied = 0;
  for (uint32_t abs16 = 0; abs16 <= 0x7FFFu; ++abs16) {
    int k = 0;
    const bool normal = (abs16 >> 7) != 0 && (abs16 >> 7) != 0xFF;
    ASSERT_EQ(Pow2BlockScaleExponent(abs16, &k), normal) << std::hex << abs16;
    if (!normal) continue;
    ++applied;
    const float want = Pow2ScaleFromAmax(FromBits(abs16 << 16), Fp8Format::kE4M3);
    ASSERT_EQ(Pow2Bits(k), Bits(want)) << "amax bits " << std::hex << abs16;
    ASSERT_EQ(Pow2InverseBits(k), Bits(1.0f / want)) << "amax bits " << std::hex << abs16;
  }
  EXPECT_EQ(applied, 254 * 128);  // every normal exponent, every mantissa
}

TEST(ScaleBits, MxScaleByteEqualsTheDividingRuleForEveryBf16Amax) {
  int applied = 0;
  for (uint32_t abs16 = 0; abs16 <= 0x7FFFu; ++abs16) {
    uint32_t byte = 0;
    const uint32_t biased = abs16 >> 7;
    const bool in_form = biased >= 16 && biased < 0xFF;
    ASSERT_EQ(MxScaleByteFromExponent(abs16, &byte), in_form) << std::hex << abs16;
    if (!in_form) continue;
    ++applied;
    ASSERT_EQ(byte, MxScaleFromAmax(FromBits(abs16 << 16))) << "amax bits " << std::hex << abs16;
  }
  EXPECT_EQ(applied, (0xFF - 16) * 128);
}

// The boundaries the comment derives, by name: m = 1.75 keeps the larger scale (R6) and
// the exact byte (R8); the next BF16 mantissa up takes the other branch.
TEST(ScaleBits, TheBoundaryAtMantissaOnePointSevenFive) {
  const uint32_t at = (127u << 7) | 96u;     // 1.75
  const uint32_t above = (127u << 7) | 97u;  // 1.7578125
  int k = 0;
  ASSERT_TRUE(Pow2BlockScaleExponent(at, &k));
  EXPECT_EQ(k, 8);  // 448 / 1.75 = 256
  ASSERT_TRUE(Pow2BlockScaleExponent(above, &k));
  EXPECT_EQ(k, 7);  // 448 / 1.7578125 = 254.9
  uint32_t byte = 0;
  ASSERT_TRUE(MxScaleByteFromExponent((135u << 7) | 96u, &byte));  // 448
  EXPECT_EQ(byte, 127u);                                           // 2^0
  ASSERT_TRUE(MxScaleByteFromExponent((135u << 7) | 97u, &byte));  // 450
  EXPECT_EQ(byte, 128u);                                           // 2^1
}

// R9's amax / 6 without a division, over every non-negative BF16 up to +Inf.
TEST(ScaleBits, DivideBf16MagnitudeBy6EqualsTheDivisionForEveryBf16) {
  for (uint32_t abs16 = 0; abs16 <= 0x7F80u; ++abs16) {
    const float amax = FromBits(abs16 << 16);
    ASSERT_EQ(Bits(DivideBf16MagnitudeBy6(amax)), Bits(amax / 6.0f))
        << "amax bits " << std::hex << abs16;
  }
}

// R4 in arithmetic form against EncodeE2M1 (the host's rounding by the format's rules):
// every fp32 from 0.2 to 7 (where the rounding boundaries 0.25 .. 5 and the saturation
// lie), then a stride through all non-negative patterns (zero, subnormals, huge values,
// infinity) and each boundary's neighbours. The result is 2^23 + code, code in the low 3
// bits. (Every non-negative non-NaN fp32 was checked outside the suite, for the form with
// minima and again for the saturating one that replaced it: 15 s on two cores.)
TEST(ScaleBits, E2m1MagnitudeOnGridEqualsTheHostRuleForEveryNonNanMagnitude) {
  const auto check = [](uint32_t bits) {
    const uint32_t got = Bits(E2m1MagnitudeOnGrid(FromBits(bits)));
    const uint32_t want = 0x4B000000u | (EncodeE2M1(FromBits(bits)) & 0x7u);
    EXPECT_EQ(got, want) << "|x| = " << FromBits(bits) << " bits " << std::hex << bits;
    return got == want;
  };
  for (uint32_t b = Bits(0.2f); b <= Bits(7.0f); ++b) ASSERT_TRUE(check(b));
  for (uint32_t b = 0; b < 0x7F800000u - 4093u; b += 4093) ASSERT_TRUE(check(b));
  for (const float t :
       {0.25f, 0.75f, 1.0f, 1.25f, 1.75f, 2.0f, 2.5f, 3.5f, 4.0f, 5.0f, 6.0f, 7.0f, 8.0f}) {
    for (int d = -4; d <= 4; ++d) ASSERT_TRUE(check(Bits(t) + d));
  }
  for (const uint32_t b : {0x00000000u, 0x00000001u, 0x007FFFFFu, 0x00800000u, 0x4AFFFFFFu,
                           0x4B000000u, 0x7F7FFFFFu, 0x7F800000u}) {
    ASSERT_TRUE(check(b));
  }
}

}  // namespace
}  // namespace gemmprof::core::quant
