// QuantizeRowwise (fp8-rowwise, R11) against an independent computation: the expected
// bytes come from a first-principles FP8 encoder (every finite code's value from its
// sign/exponent/mantissa fields, nearest code with ties to the even code, saturation to
// the largest finite code), not from EncodeFp8, and the expected scales from the R5 / R7
// text. Hand-computed rows pin the special cases: zeros, NaN, Inf, a scale that
// overflows fp32, an amax that saturates after the multiply.
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "core/quant/quant.h"
#include "gtest/gtest.h"

namespace gemmprof::core::quant {
namespace {

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kFltMax = std::numeric_limits<float>::max();

struct Layout {
  int mant_bits, bias, max_code;  // max_code: the largest finite positive code
};
Layout LayoutOf(Fp8Format f) {
  return f == Fp8Format::kE4M3 ? Layout{3, 7, 0x7E} : Layout{2, 15, 0x7B};
}

// Value of a non-negative finite code: subnormal when the exponent field is 0.
double CodeValue(int code, const Layout& l) {
  const int e = code >> l.mant_bits, m = code & ((1 << l.mant_bits) - 1);
  if (e == 0) return std::ldexp(static_cast<double>(m), 1 - l.bias - l.mant_bits);
  return std::ldexp(1.0 + std::ldexp(static_cast<double>(m), -l.mant_bits), e - l.bias);
}

// cvt.rn.satfinite as the rules state it: NaN -> 0x7F (R1), nearest code with ties to
// the even code, anything at or beyond the largest finite value (Inf included) -> it,
// the sign kept for zero and underflow (R2).
uint8_t ReferenceEncode(float x, Fp8Format f) {
  if (std::isnan(x)) return 0x7F;
  const Layout l = LayoutOf(f);
  const uint8_t sign = std::signbit(x) ? 0x80 : 0x00;
  const double a = std::fabs(static_cast<double>(x));
  if (a >= CodeValue(l.max_code, l)) return sign | l.max_code;
  int lo = 0;
  while (CodeValue(lo + 1, l) <= a) ++lo;
  const double below = a - CodeValue(lo, l), above = CodeValue(lo + 1, l) - a;
  const int code = below < above ? lo : above < below ? lo + 1 : (lo % 2 == 0 ? lo : lo + 1);
  return sign | static_cast<uint8_t>(code);
}

struct Expected {
  std::vector<uint8_t> data;
  std::vector<float> scale_inv;
};

// R7 amax, R5 scale and scale_inv, data = encode(fp32(x * scale)), row by row.
Expected ReferenceRowwise(const std::vector<float>& x, int64_t rows, int64_t cols, Fp8Format f) {
  const float fp8_max = f == Fp8Format::kE4M3 ? 448.0f : 57344.0f;
  Expected e;
  for (int64_t r = 0; r < rows; ++r) {
    float amax = 0.0f;
    for (int64_t c = 0; c < cols; ++c) {
      const float v = x[r * cols + c];
      if (!std::isnan(v) && std::fabs(v) > amax) amax = std::fabs(v);
    }
    float scale = 1.0f;
    if (amax > 0.0f && std::isfinite(amax)) {
      const volatile float quotient = fp8_max / amax;  // one fp32 division
      scale = std::isinf(quotient) ? kFltMax : quotient;
    }
    e.scale_inv.push_back(1.0f / scale);
    for (int64_t c = 0; c < cols; ++c) {
      const volatile float product = x[r * cols + c] * scale;  // one fp32 multiply
      e.data.push_back(ReferenceEncode(product, f));
    }
  }
  return e;
}

std::string Name(Fp8Format f) { return f == Fp8Format::kE4M3 ? "e4m3" : "e5m2"; }

void ExpectMatchesReference(const std::vector<float>& x, int64_t rows, int64_t cols, Fp8Format f) {
  SCOPED_TRACE(std::to_string(rows) + "x" + std::to_string(cols) + " " + Name(f));
  const RowScaled got = QuantizeRowwise(x, rows, cols, f);
  const Expected want = ReferenceRowwise(x, rows, cols, f);
  ASSERT_EQ(got.rows, rows);
  ASSERT_EQ(got.cols, cols);
  ASSERT_EQ(got.data.size(), want.data.size());
  ASSERT_EQ(got.scale_inv.size(), want.scale_inv.size());
  for (int64_t r = 0; r < rows; ++r) {
    ASSERT_EQ(std::bit_cast<uint32_t>(got.scale_inv[r]), std::bit_cast<uint32_t>(want.scale_inv[r]))
        << "row " << r << " scale_inv " << got.scale_inv[r] << " want " << want.scale_inv[r];
  }
  for (size_t i = 0; i < want.data.size(); ++i) {
    ASSERT_EQ(static_cast<int>(got.data[i]), static_cast<int>(want.data[i]))
        << "row " << i / cols << " col " << i % cols << " x " << x[i];
  }
}

TEST(ReferenceEncode, AgreesWithHandValues) {
  // The test's own encoder on values read off the formats' tables.
  EXPECT_EQ(ReferenceEncode(448.0f, Fp8Format::kE4M3), 0x7E);
  EXPECT_EQ(ReferenceEncode(464.0f, Fp8Format::kE4M3), 0x7E);
  EXPECT_EQ(ReferenceEncode(-1.0f, Fp8Format::kE4M3), 0xB8);
  EXPECT_EQ(ReferenceEncode(0x1p-9f, Fp8Format::kE4M3), 0x01);
  EXPECT_EQ(ReferenceEncode(0x1p-10f, Fp8Format::kE4M3), 0x00);  // tie -> even (zero)
  EXPECT_EQ(ReferenceEncode(-1e-30f, Fp8Format::kE4M3), 0x80);
  EXPECT_EQ(ReferenceEncode(1.0625f, Fp8Format::kE4M3), 0x38);  // tie 1 / 1.125 -> even
  EXPECT_EQ(ReferenceEncode(57344.0f, Fp8Format::kE5M2), 0x7B);
  EXPECT_EQ(ReferenceEncode(-kInf, Fp8Format::kE5M2), 0xFB);
  EXPECT_EQ(ReferenceEncode(0x1p-16f, Fp8Format::kE5M2), 0x01);
  EXPECT_EQ(ReferenceEncode(1.0f, Fp8Format::kE5M2), 0x3C);
}

TEST(QuantizeRowwise, HandComputedRow) {
  // amax 4: scale 448 / 4 = 112; 112 = 1.75 * 2^6 -> 0x6E, -224 -> 0xF6, 56 -> 0x66, 448 -> 0x7E.
  const std::vector<float> x = {1.0f, -2.0f, 0.5f, 4.0f};
  const RowScaled q = QuantizeRowwise(x, 1, 4, Fp8Format::kE4M3);
  EXPECT_EQ(q.data, (std::vector<uint8_t>{0x6E, 0xF6, 0x66, 0x7E}));
  ASSERT_EQ(q.scale_inv.size(), 1u);
  EXPECT_EQ(q.scale_inv[0], 1.0f / 112.0f);
  // E5M2: scale 57344 / 4 = 14336 = 1.75 * 2^13 -> 0x73; -28672 -> 0xF7; 7168 -> 0x6F.
  const RowScaled q5 = QuantizeRowwise(x, 1, 4, Fp8Format::kE5M2);
  EXPECT_EQ(q5.data, (std::vector<uint8_t>{0x73, 0xF7, 0x6F, 0x7B}));
  EXPECT_EQ(q5.scale_inv[0], 1.0f / 14336.0f);
}

TEST(QuantizeRowwise, EachRowHasItsOwnScale) {
  // Row 1 is row 0 times 2^-20: same bytes, scale_inv 2^-20 times row 0's.
  const std::vector<float> x = {
      3.0f, -1.5f, 0.25f, 3.0f * 0x1p-20f, -1.5f * 0x1p-20f, 0.25f * 0x1p-20f};
  const RowScaled q = QuantizeRowwise(x, 2, 3, Fp8Format::kE4M3);
  for (int c = 0; c < 3; ++c) EXPECT_EQ(q.data[c], q.data[3 + c]) << c;
  EXPECT_EQ(q.scale_inv[1], q.scale_inv[0] * 0x1p-20f);
  EXPECT_NE(q.scale_inv[0], q.scale_inv[1]);
}

TEST(QuantizeRowwise, SpecialRows) {
  const std::vector<float> x = {
      0.0f,       -0.0f,       0.0f,  0.0f,       // zeros: scale 1, signed zero bytes
      kNaN,       2.0f,        -1.0f, kNaN,       // NaN ignored in amax: amax 2
      kNaN,       -kNaN,       kNaN,  kNaN,       // all NaN: amax 0, scale 1, 0x7F
      kInf,       1.0f,        -2.0f, 0.0f,       // Inf: scale 1, Inf saturates
      0x1p-130f,  -0x1p-130f,  0.0f,  0x1p-131f,  // 448 / amax overflows fp32: scale FLT_MAX
      1.2109375f, -1.2109375f, 1.0f,  -0.0f,      // amax * fp32(448 / amax) = 448.00003: saturates
      0x1.1p127f, -0x1p126f,   1.0f,  -kInf,      // -Inf with huge values: scale 1
      0x1.1p127f, -0x1p126f,   1.0f,  0.0f,       // huge finite amax: 1 underflows to zero
  };
  const int64_t rows = 8, cols = 4;
  for (Fp8Format f : {Fp8Format::kE4M3, Fp8Format::kE5M2}) {
    ASSERT_NO_FATAL_FAILURE(ExpectMatchesReference(x, rows, cols, f));
  }
  const RowScaled q = QuantizeRowwise(x, rows, cols, Fp8Format::kE4M3);
  EXPECT_EQ(q.scale_inv[0], 1.0f);
  EXPECT_EQ((std::vector<uint8_t>(q.data.begin(), q.data.begin() + 4)),
            (std::vector<uint8_t>{0x00, 0x80, 0x00, 0x00}));
  EXPECT_EQ(q.scale_inv[1], 1.0f / 224.0f);
  EXPECT_EQ((std::vector<uint8_t>(q.data.begin() + 4, q.data.begin() + 8)),
            (std::vector<uint8_t>{0x7F, 0x7E, 0xF6, 0x7F}));
  EXPECT_EQ(q.scale_inv[2], 1.0f);
  EXPECT_EQ((std::vector<uint8_t>(q.data.begin() + 8, q.data.begin() + 12)),
            (std::vector<uint8_t>{0x7F, 0x7F, 0x7F, 0x7F}));
  EXPECT_EQ(q.scale_inv[3], 1.0f);
  EXPECT_EQ((std::vector<uint8_t>(q.data.begin() + 12, q.data.begin() + 16)),
            (std::vector<uint8_t>{0x7E, 0x38, 0xC0, 0x00}));
  EXPECT_EQ(q.scale_inv[4], 1.0f / kFltMax);
  EXPECT_GT(q.scale_inv[4], 0.0f);  // subnormal, not flushed
  EXPECT_EQ(q.data[20], 0x7E);      // 448.00003 saturates to 448 (E4M3 has no Inf)
  EXPECT_EQ(q.data[21], 0xFE);
  EXPECT_EQ(q.scale_inv[6], 1.0f);
  EXPECT_EQ(q.data[24], 0x7E);
  EXPECT_EQ(q.data[27], 0xFE);
  EXPECT_EQ(q.scale_inv[7], 1.0f / (448.0f / 0x1.1p127f));
  EXPECT_EQ(q.data[28], 0x7E);
  EXPECT_EQ(q.data[30], 0x00);
}

TEST(QuantizeRowwise, RandomRowsOfEveryMagnitude) {
  // Rows spanning 2^-40 .. 2^40 in magnitude, so some land in the subnormal codes after
  // the scale (small values beside a large one) and every exponent of the scale occurs.
  const int64_t rows = 81, cols = 67;
  std::mt19937_64 rng(1515);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  std::vector<float> x(rows * cols);
  for (int64_t r = 0; r < rows; ++r) {
    const float magnitude = std::ldexp(1.0f, static_cast<int>(r) - 40);
    for (int64_t c = 0; c < cols; ++c) {
      // Every 5th element 2^-12 smaller: its scaled value is subnormal or underflows.
      const float shrink = c % 5 == 0 ? 0x1p-12f : 1.0f;
      x[r * cols + c] = RoundToBf16(dist(rng) * magnitude * shrink);
    }
  }
  for (Fp8Format f : {Fp8Format::kE4M3, Fp8Format::kE5M2}) {
    ASSERT_NO_FATAL_FAILURE(ExpectMatchesReference(x, rows, cols, f));
  }
}

TEST(QuantizeRowwise, DequantizeIsCodeTimesScaleInv) {
  const std::vector<float> x = {1.0f, -2.0f, 0.3f, 4.0f, 100.0f, 0.0f, -7.0f, 1e-3f};
  for (Fp8Format f : {Fp8Format::kE4M3, Fp8Format::kE5M2}) {
    const RowScaled q = QuantizeRowwise(x, 2, 4, f);
    const std::vector<float> back = Dequantize(q, f);
    ASSERT_EQ(back.size(), x.size());
    for (size_t i = 0; i < x.size(); ++i) {
      EXPECT_EQ(back[i], static_cast<float>(CodeValue(q.data[i] & 0x7F, LayoutOf(f))) *
                             (q.data[i] & 0x80 ? -1.0f : 1.0f) * q.scale_inv[i / 4])
          << Name(f) << " " << i;
      // Relative error bounded by half an ulp of the format (2^-4 E4M3, 2^-3 E5M2) for
      // values well inside the normal range.
      if (std::fabs(x[i]) >= 0.1f) {
        EXPECT_LE(std::fabs(back[i] - x[i]),
                  std::fabs(x[i]) * (f == Fp8Format::kE4M3 ? 0.0625f : 0.125f))
            << Name(f) << " " << i;
      }
    }
  }
}

TEST(QuantizeRowwise, EmptyShapes) {
  const RowScaled none = QuantizeRowwise({}, 0, 16, Fp8Format::kE4M3);
  EXPECT_TRUE(none.data.empty());
  EXPECT_TRUE(none.scale_inv.empty());
  // Rows without columns: amax 0, scale 1.
  const RowScaled narrow = QuantizeRowwise({}, 3, 0, Fp8Format::kE5M2);
  EXPECT_TRUE(narrow.data.empty());
  EXPECT_EQ(narrow.scale_inv, (std::vector<float>{1.0f, 1.0f, 1.0f}));
}

TEST(QuantizeRowwiseDeathTest, BadShapesAbortNamingThem) {
  const std::vector<float> x(5, 1.0f);
  EXPECT_DEATH(QuantizeRowwise(x, 2, 3, Fp8Format::kE4M3),
               "QuantizeRowwise: 5 elements for shape \\[2, 3\\]");
  EXPECT_DEATH(QuantizeRowwise(x, -1, 5, Fp8Format::kE4M3), "shape \\[-1, 5\\]");
}

}  // namespace
}  // namespace gemmprof::core::quant
