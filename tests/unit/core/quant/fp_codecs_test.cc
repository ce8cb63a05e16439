// Scalar codecs against independent formulas and a brute-force nearest-value encoder.
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "gtest/gtest.h"
#include "core/quant/quant.h"

namespace gemmprof::core::quant {
namespace {

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

// OCP FP8 formulas, written out independently of the library's bit logic.
double RefDecodeE4M3(uint8_t b) {
  const int s = b >> 7, e = (b >> 3) & 0xF, m = b & 0x7;
  if (e == 15 && m == 7) return std::nan("");
  const double mag = e == 0 ? (m / 8.0) * std::pow(2.0, -6) : (1 + m / 8.0) * std::pow(2.0, e - 7);
  return s ? -mag : mag;
}
double RefDecodeE5M2(uint8_t b) {
  const int s = b >> 7, e = (b >> 2) & 0x1F, m = b & 0x3;
  if (e == 31) return m == 0 ? (s ? -INFINITY : INFINITY) : std::nan("");
  const double mag =
      e == 0 ? (m / 4.0) * std::pow(2.0, -14) : (1 + m / 4.0) * std::pow(2.0, e - 15);
  return s ? -mag : mag;
}
double RefDecode(uint8_t b, Fp8Format f) {
  return f == Fp8Format::kE4M3 ? RefDecodeE4M3(b) : RefDecodeE5M2(b);
}
uint8_t MaxCode(Fp8Format f) { return f == Fp8Format::kE4M3 ? 0x7E : 0x7B; }

// Brute force: nearest finite code to |x| clamped to max, ties to the even code.
uint8_t BruteEncode(float x, Fp8Format f) {
  if (std::isnan(x)) return 0x7F;
  static const std::vector<double> e4 = [] {
    std::vector<double> v;
    for (int c = 0; c < 256; ++c) v.push_back(RefDecodeE4M3(static_cast<uint8_t>(c)));
    return v;
  }();
  static const std::vector<double> e5 = [] {
    std::vector<double> v;
    for (int c = 0; c < 256; ++c) v.push_back(RefDecodeE5M2(static_cast<uint8_t>(c)));
    return v;
  }();
  const std::vector<double>& table = f == Fp8Format::kE4M3 ? e4 : e5;
  const double mag = std::min<double>(std::fabs(x), table[MaxCode(f)]);
  uint8_t best = 0;
  double best_err = INFINITY;
  for (int c = 0; c <= MaxCode(f); ++c) {
    const double err = std::fabs(table[c] - mag);
    if (err < best_err || (err == best_err && (c & 1) == 0)) {
      best = static_cast<uint8_t>(c);
      best_err = err;
    }
  }
  return best | (std::signbit(x) ? 0x80 : 0);
}

class Fp8Test : public ::testing::TestWithParam<Fp8Format> {};

TEST_P(Fp8Test, DecodesAll256BytesLikeTheFormula) {
  for (int b = 0; b < 256; ++b) {
    const double ref = RefDecode(static_cast<uint8_t>(b), GetParam());
    const float got = DecodeFp8(static_cast<uint8_t>(b), GetParam());
    if (std::isnan(ref)) {
      EXPECT_TRUE(std::isnan(got)) << "byte " << b;
    } else {
      EXPECT_EQ(static_cast<double>(got), ref) << "byte " << b;
      EXPECT_EQ(std::signbit(got), (b & 0x80) != 0) << "byte " << b;
    }
  }
}

TEST_P(Fp8Test, EncodeOfDecodeIsIdentityForEveryFiniteByte) {
  int finite = 0;
  for (int b = 0; b < 256; ++b) {
    const float v = DecodeFp8(static_cast<uint8_t>(b), GetParam());
    if (!std::isfinite(v)) continue;
    ++finite;
    EXPECT_EQ(EncodeFp8(v, GetParam()), b) << "byte " << b;
  }
  EXPECT_EQ(finite, GetParam() == Fp8Format::kE4M3 ? 254 : 248);
}

TEST_P(Fp8Test, MidpointsRoundToEvenAndNeighboursRoundToNearest) {
  const Fp8Format f = GetParam();
  for (int c = 0; c < MaxCode(f); ++c) {
    const float lo = DecodeFp8(static_cast<uint8_t>(c), f);
    const float hi = DecodeFp8(static_cast<uint8_t>(c + 1), f);
    const float mid = static_cast<float>((static_cast<double>(lo) + hi) / 2);
    ASSERT_EQ(static_cast<double>(mid), (static_cast<double>(lo) + hi) / 2);  // exact in fp32
    const uint8_t even = (c % 2 == 0) ? c : c + 1;
    EXPECT_EQ(EncodeFp8(mid, f), even) << "midpoint of " << c;
    EXPECT_EQ(EncodeFp8(-mid, f), even | 0x80) << "midpoint of -" << c;
    EXPECT_EQ(EncodeFp8(std::nextafter(mid, 0.0f), f), c) << "below midpoint of " << c;
    EXPECT_EQ(EncodeFp8(std::nextafter(mid, kInf), f), c + 1) << "above midpoint of " << c;
  }
}

TEST_P(Fp8Test, MatchesBruteForceOnRandomBitPatterns) {
  std::mt19937_64 rng(7);
  const Fp8Format f = GetParam();
  // Exponents from deep underflow to far past max; every mantissa pattern.
  const int lo = f == Fp8Format::kE4M3 ? -14 : -20;
  const int hi = f == Fp8Format::kE4M3 ? 10 : 17;
  for (int i = 0; i < 40000; ++i) {
    const int exp = lo + static_cast<int>(rng() % (hi - lo + 1));
    const uint32_t bits = (static_cast<uint32_t>(rng() & 1) << 31) |
                          (static_cast<uint32_t>(exp + 127) << 23) |
                          static_cast<uint32_t>(rng() & 0x7FFFFF);
    const float x = std::bit_cast<float>(bits);
    ASSERT_EQ(EncodeFp8(x, f), BruteEncode(x, f)) << "x = " << x << " bits " << bits;
  }
}

INSTANTIATE_TEST_SUITE_P(Formats, Fp8Test, ::testing::Values(Fp8Format::kE4M3, Fp8Format::kE5M2),
                         [](const auto& info) {
                           return info.param == Fp8Format::kE4M3 ? "E4M3" : "E5M2";
                         });

TEST(Fp8E4M3, MaxSaturationAndInfinity) {
  const auto e = [](float x) { return EncodeFp8(x, Fp8Format::kE4M3); };
  EXPECT_EQ(Fp8Max(Fp8Format::kE4M3), 448.0f);
  EXPECT_EQ(e(448.0f), 0x7E);
  EXPECT_EQ(e(std::nextafter(448.0f, 0.0f)), 0x7E);
  EXPECT_EQ(e(432.0f), 0x7E);  // 416/448 tie -> even 448
  EXPECT_EQ(e(std::nextafter(432.0f, 0.0f)), 0x7D);
  EXPECT_EQ(e(464.0f), 0x7E);  // 448/480 tie, 480 is NaN's slot: stays 448
  EXPECT_EQ(e(std::nextafter(464.0f, kInf)), 0x7E);
  EXPECT_EQ(e(1e6f), 0x7E);
  EXPECT_EQ(e(-1e6f), 0xFE);
  EXPECT_EQ(e(std::numeric_limits<float>::max()), 0x7E);
  EXPECT_EQ(e(kInf), 0x7E);
  EXPECT_EQ(e(-kInf), 0xFE);
}

TEST(Fp8E5M2, MaxSaturationAndInfinity) {
  const auto e = [](float x) { return EncodeFp8(x, Fp8Format::kE5M2); };
  EXPECT_EQ(Fp8Max(Fp8Format::kE5M2), 57344.0f);
  EXPECT_EQ(e(57344.0f), 0x7B);
  EXPECT_EQ(e(std::nextafter(61440.0f, 0.0f)), 0x7B);
  EXPECT_EQ(e(61440.0f), 0x7B);
  EXPECT_EQ(e(1e30f), 0x7B);
  EXPECT_EQ(e(kInf), 0x7B);
  EXPECT_EQ(e(-kInf), 0xFB);
  EXPECT_EQ(DecodeFp8(0x7C, Fp8Format::kE5M2), kInf);
  EXPECT_EQ(DecodeFp8(0xFC, Fp8Format::kE5M2), -kInf);
  EXPECT_TRUE(std::isnan(DecodeFp8(0x7D, Fp8Format::kE5M2)));
}

TEST(Fp8, SubnormalsAndUnderflow) {
  const float e4_min = std::ldexp(1.0f, -9), e5_min = std::ldexp(1.0f, -16);
  EXPECT_EQ(DecodeFp8(0x01, Fp8Format::kE4M3), e4_min);
  EXPECT_EQ(DecodeFp8(0x01, Fp8Format::kE5M2), e5_min);
  EXPECT_EQ(EncodeFp8(e4_min, Fp8Format::kE4M3), 0x01);
  EXPECT_EQ(EncodeFp8(e4_min / 2, Fp8Format::kE4M3), 0x00);  // tie with 0 -> even 0
  EXPECT_EQ(EncodeFp8(std::nextafter(e4_min / 2, 1.0f), Fp8Format::kE4M3), 0x01);
  EXPECT_EQ(EncodeFp8(-e4_min / 2, Fp8Format::kE4M3), 0x80);  // signed zero kept
  EXPECT_EQ(EncodeFp8(1.5f * e4_min, Fp8Format::kE4M3), 0x02);
  EXPECT_EQ(EncodeFp8(2.5f * e4_min, Fp8Format::kE4M3), 0x02);
  EXPECT_EQ(EncodeFp8(7 * e4_min, Fp8Format::kE4M3), 0x07);            // largest subnormal
  EXPECT_EQ(EncodeFp8(std::ldexp(1.0f, -6), Fp8Format::kE4M3), 0x08);  // smallest normal
  EXPECT_EQ(EncodeFp8(e5_min, Fp8Format::kE5M2), 0x01);
  EXPECT_EQ(EncodeFp8(e5_min / 2, Fp8Format::kE5M2), 0x00);
  EXPECT_EQ(EncodeFp8(-1e-30f, Fp8Format::kE5M2), 0x80);
  EXPECT_EQ(EncodeFp8(std::numeric_limits<float>::denorm_min(), Fp8Format::kE4M3), 0x00);
}

TEST(Fp8, NanAndZeros) {
  for (Fp8Format f : {Fp8Format::kE4M3, Fp8Format::kE5M2}) {
    EXPECT_EQ(EncodeFp8(kNaN, f), 0x7F);
    EXPECT_EQ(EncodeFp8(-kNaN, f), 0x7F);  // R1: sign dropped, as the hardware does
    EXPECT_EQ(EncodeFp8(std::bit_cast<float>(0x7FE00000u), f), 0x7F);
    EXPECT_EQ(EncodeFp8(0.0f, f), 0x00);
    EXPECT_EQ(EncodeFp8(-0.0f, f), 0x80);
    EXPECT_TRUE(std::signbit(DecodeFp8(0x80, f)));
    EXPECT_EQ(DecodeFp8(0x80, f), 0.0f);
  }
  EXPECT_TRUE(std::isnan(DecodeFp8(0x7F, Fp8Format::kE4M3)));
  EXPECT_TRUE(std::isnan(DecodeFp8(0xFF, Fp8Format::kE4M3)));
}

TEST(E2M1, DecodesTheEightMagnitudes) {
  const float expected[8] = {0, 0.5f, 1, 1.5f, 2, 3, 4, 6};
  for (int n = 0; n < 16; ++n) {
    const float mag = expected[n & 7];
    EXPECT_EQ(DecodeE2M1(static_cast<uint8_t>(n)), (n & 8) ? -mag : mag) << n;
    EXPECT_EQ(EncodeE2M1(DecodeE2M1(static_cast<uint8_t>(n))), n) << n;
  }
}

TEST(E2M1, RoundsToNearestEvenAndSaturates) {
  struct Case {
    float x;
    uint8_t nibble;
  };
  const Case cases[] = {{0.25f, 0x0},
                        {std::nextafter(0.25f, 1.0f), 0x1},
                        {0.75f, 0x2},
                        {1.25f, 0x2},
                        {1.75f, 0x4},
                        {2.5f, 0x4},
                        {3.5f, 0x6},
                        {5.0f, 0x6},
                        {std::nextafter(5.0f, 9.0f), 0x7},
                        {6.0f, 0x7},
                        {7.0f, 0x7},
                        {1e9f, 0x7},
                        {kInf, 0x7},
                        {-kInf, 0xF},
                        {-5.0f, 0xE},
                        {-0.0f, 0x8},
                        {-0.1f, 0x8},
                        {kNaN, 0x7},
                        {-kNaN, 0x7}};
  for (const Case& c : cases) EXPECT_EQ(EncodeE2M1(c.x), c.nibble) << "x = " << c.x;
}

TEST(Ue8m0, DecodeAndRoundUp) {
  EXPECT_EQ(DecodeUe8m0(127), 1.0f);
  EXPECT_EQ(DecodeUe8m0(0), std::ldexp(1.0f, -127));
  EXPECT_EQ(DecodeUe8m0(254), std::ldexp(1.0f, 127));
  EXPECT_TRUE(std::isnan(DecodeUe8m0(255)));
  EXPECT_EQ(EncodeUe8m0RoundUp(1.0f), 127);
  EXPECT_EQ(EncodeUe8m0RoundUp(std::nextafter(1.0f, 2.0f)), 128);
  EXPECT_EQ(EncodeUe8m0RoundUp(0.75f), 127);
  EXPECT_EQ(EncodeUe8m0RoundUp(0.25f), 125);
  EXPECT_EQ(EncodeUe8m0RoundUp(0.0f), 0);
  EXPECT_EQ(EncodeUe8m0RoundUp(std::ldexp(1.0f, -127)), 0);
  EXPECT_EQ(EncodeUe8m0RoundUp(std::ldexp(1.0f, -140)), 0);
  EXPECT_EQ(EncodeUe8m0RoundUp(std::nextafter(std::ldexp(1.0f, -127), 1.0f)), 1);
  EXPECT_EQ(EncodeUe8m0RoundUp(std::ldexp(1.0f, -126)), 1);
  EXPECT_EQ(EncodeUe8m0RoundUp(std::ldexp(1.0f, 127)), 254);
  EXPECT_EQ(EncodeUe8m0RoundUp(std::numeric_limits<float>::max()), 254);
  EXPECT_EQ(EncodeUe8m0RoundUp(kInf), 254);
  EXPECT_EQ(EncodeUe8m0RoundUp(kNaN), 255);
}

TEST(Bf16, RoundsToNearestEven) {
  const auto r = [](uint32_t bits) { return FloatToBf16Bits(std::bit_cast<float>(bits)); };
  EXPECT_EQ(r(0x3F800000u), 0x3F80);
  EXPECT_EQ(r(0x3F808000u), 0x3F80);  // tie, even stays
  EXPECT_EQ(r(0x3F818000u), 0x3F82);  // tie, odd rounds up
  EXPECT_EQ(r(0x3F808001u), 0x3F81);
  EXPECT_EQ(r(0x3F807FFFu), 0x3F80);
  EXPECT_EQ(r(0xBF818000u), 0xBF82);
  EXPECT_EQ(r(0x7F7FFFFFu), 0x7F80);  // overflow rounds to Inf
  EXPECT_EQ(r(0x7F800000u), 0x7F80);
  EXPECT_EQ(r(0xFF800000u), 0xFF80);
  EXPECT_EQ(r(0x7F800001u), 0x7FC0);  // signalling NaN becomes quiet, not Inf
  EXPECT_EQ(r(0xFFC00000u), 0xFFC0);
  EXPECT_EQ(r(0x80000000u), 0x8000);
  EXPECT_EQ(Bf16BitsToFloat(0x3F80), 1.0f);
  EXPECT_EQ(RoundToBf16(1.00390625f), 1.0f);  // 1 + 2^-8 is the tie
  EXPECT_EQ(RoundToBf16(1.01171875f), 1.015625f);
}

}  // namespace
}  // namespace gemmprof::core::quant
