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

}  // namespace
}  // namespace gemmprof::core::quant
