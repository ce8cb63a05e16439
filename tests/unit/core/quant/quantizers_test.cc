// Scale rules and tensor/block quantizers: scales recomputed independently, per-block
// invariants, dequantization error bounds on random normal data.
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

std::vector<float> RandomNormal(int64_t n, uint64_t seed, float stddev = 1.0f) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> dist(0.0f, stddev);
  std::vector<float> x(n);
  for (float& v : x) v = RoundToBf16(dist(rng));
  return x;
}

bool IsPowerOfTwo(float x) {
  return x > 0 && std::isfinite(x) && (std::bit_cast<uint32_t>(x) & 0x7FFFFFu) == 0;
}

double RelFrobenius(const std::vector<float>& a, const std::vector<float>& ref) {
  double num = 0, den = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    num += (double(a[i]) - ref[i]) * (double(a[i]) - ref[i]);
    den += double(ref[i]) * ref[i];
  }
  return std::sqrt(num / den);
}

TEST(Amax, IgnoresNanAndKeepsInf) {
  const std::vector<float> with_nan = {1.0f, kNaN, -3.0f, 2.0f};
  EXPECT_EQ(Amax(with_nan), 3.0f);
  EXPECT_EQ(Amax(std::vector<float>{kNaN, kNaN}), 0.0f);
  EXPECT_EQ(Amax(std::vector<float>{1.0f, -kInf}), kInf);
  EXPECT_EQ(Amax(std::vector<float>{}), 0.0f);
}

TEST(ScaleFromAmax, FollowsR5) {
  EXPECT_EQ(ScaleFromAmax(2.0f, Fp8Format::kE4M3), 224.0f);
  EXPECT_EQ(ScaleFromAmax(3.0f, Fp8Format::kE4M3), 448.0f / 3.0f);
  EXPECT_EQ(ScaleFromAmax(4.0f, Fp8Format::kE5M2), 14336.0f);
  EXPECT_EQ(ScaleFromAmax(0.0f, Fp8Format::kE4M3), 1.0f);
  EXPECT_EQ(ScaleFromAmax(kInf, Fp8Format::kE4M3), 1.0f);
  EXPECT_EQ(ScaleFromAmax(kNaN, Fp8Format::kE4M3), 1.0f);
  EXPECT_EQ(ScaleFromAmax(1e-44f, Fp8Format::kE4M3), std::numeric_limits<float>::max());
}

TEST(DelayedScale, MaxAndMostRecent) {
  const std::vector<float> history = {1.0f, 4.0f, kNaN, 2.0f};  // index 0 = most recent
  EXPECT_EQ(DelayedScale(history, AmaxAlgo::kMax, Fp8Format::kE4M3), 112.0f);
  EXPECT_EQ(DelayedScale(history, AmaxAlgo::kMostRecent, Fp8Format::kE4M3), 448.0f);
  EXPECT_EQ(DelayedScale(history, AmaxAlgo::kMax, Fp8Format::kE5M2), 14336.0f);
  EXPECT_EQ(DelayedScale({}, AmaxAlgo::kMax, Fp8Format::kE4M3), 1.0f);
  EXPECT_EQ(DelayedScale(std::vector<float>{0.0f}, AmaxAlgo::kMostRecent, Fp8Format::kE4M3), 1.0f);
}

TEST(Pow2Scale, ClearsTheMantissa) {
  EXPECT_EQ(Pow2ScaleFromAmax(3.0f, Fp8Format::kE4M3), 128.0f);  // 149.33 -> 128
  EXPECT_EQ(Pow2ScaleFromAmax(448.0f, Fp8Format::kE4M3), 1.0f);
  EXPECT_EQ(Pow2ScaleFromAmax(500.0f, Fp8Format::kE4M3), 0.5f);
  EXPECT_EQ(Pow2ScaleFromAmax(0.0f, Fp8Format::kE4M3), 1.0f);
  EXPECT_EQ(Pow2ScaleFromAmax(1e-44f, Fp8Format::kE4M3), std::ldexp(1.0f, 127));
}

// |dq - x| <= |x| * 2^-(man_bits+1) for normals; below the normal range the absolute
// error is at most half the smallest subnormal, in the tensor's units.
void ExpectFp8Bounds(const std::vector<float>& x, const std::vector<float>& dq, float scale_inv,
                     Fp8Format f) {
  const double rel = f == Fp8Format::kE4M3 ? 1.0 / 16 : 1.0 / 8;
  const double half_sub = std::ldexp(1.0, f == Fp8Format::kE4M3 ? -10 : -17) * scale_inv;
  for (size_t i = 0; i < x.size(); ++i) {
    const double err = std::fabs(double(dq[i]) - x[i]);
    ASSERT_LE(err, std::max(std::fabs(x[i]) * rel, half_sub) * (1 + 1e-6)) << "i = " << i;
  }
}

TEST(QuantizeCurrent, AmaxMapsToMaxAndErrorIsBounded) {
  for (Fp8Format f : {Fp8Format::kE4M3, Fp8Format::kE5M2}) {
    const std::vector<float> x = RandomNormal(131 * 257, 1);
    const TensorScaled q = QuantizeCurrent(x, 131, 257, f);
    EXPECT_EQ(q.amax, Amax(x));
    EXPECT_EQ(q.scale, Fp8Max(f) / q.amax);
    EXPECT_EQ(q.scale_inv, 1.0f / q.scale);
    ASSERT_EQ(q.data.size(), x.size());
    float max_q = 0;
    for (uint8_t b : q.data) max_q = std::max(max_q, std::fabs(DecodeFp8(b, f)));
    EXPECT_EQ(max_q, Fp8Max(f));
    const std::vector<float> dq = Dequantize(q, f);
    ExpectFp8Bounds(x, dq, q.scale_inv, f);
    EXPECT_LT(RelFrobenius(dq, x), f == Fp8Format::kE4M3 ? 0.03 : 0.06);
  }
}

TEST(QuantizeWithScale, StaleScaleSaturates) {
  const std::vector<float> x = {1.0f, -8.0f, 0.5f, kNaN};
  // A delayed scale made for amax 2 applied to a tensor whose amax grew to 8.
  const TensorScaled q = QuantizeWithScale(x, 2, 2, 224.0f, Fp8Format::kE4M3);
  EXPECT_EQ(q.amax, 8.0f);
  EXPECT_EQ(q.data[0], EncodeFp8(224.0f, Fp8Format::kE4M3));
  EXPECT_EQ(q.data[1], 0xFE);
  EXPECT_EQ(q.data[3], 0x7F);
}

void CheckBlocks(int64_t rows, int64_t cols, int64_t block_rows, bool pow2) {
  std::vector<float> x = RandomNormal(rows * cols, 2);
  // One all-zero block and one with a large outlier, to exercise both extremes, where the
  // shape holds them.
  if (block_rows == 1 && rows > 5 && cols >= 256) {
    for (int64_t c = 128; c < 256; ++c) x[5 * cols + c] = 0.0f;
  }
  if (rows > 1 && cols > 3) x[cols + 3] = 1000.0f;
  const BlockScaled q = QuantizeBlock(x, rows, cols, block_rows, pow2);
  const int64_t grid_r = (rows + block_rows - 1) / block_rows, grid_c = (cols + 127) / 128;
  ASSERT_EQ(q.scale_inv.size(), static_cast<size_t>(grid_r * grid_c));
  const std::vector<float> dq = Dequantize(q);
  for (int64_t br = 0; br < grid_r; ++br) {
    for (int64_t bc = 0; bc < grid_c; ++bc) {
      float amax = 0, max_q = 0;
      for (int64_t r = br * block_rows; r < std::min(rows, (br + 1) * block_rows); ++r) {
        for (int64_t c = bc * 128; c < std::min(cols, (bc + 1) * 128); ++c) {
          amax = std::max(amax, std::fabs(x[r * cols + c]));
          max_q = std::max(max_q, std::fabs(DecodeFp8(q.data[r * cols + c], Fp8Format::kE4M3)));
        }
      }
      const float scale_inv = q.scale_inv[br * grid_c + bc];
      SCOPED_TRACE(testing::Message() << "block " << br << "," << bc << " amax " << amax);
      EXPECT_LE(max_q, 448.0f);
      if (amax == 0) {
        EXPECT_EQ(scale_inv, 1.0f);
        EXPECT_EQ(max_q, 0.0f);
      } else if (pow2) {
        EXPECT_TRUE(IsPowerOfTwo(scale_inv)) << scale_inv;
        // 2^floor(log2(448/amax)): the block max lands in (224, 448].
        EXPECT_EQ(scale_inv, std::exp2(-std::floor(std::log2(448.0 / amax))));
        EXPECT_GE(max_q, 224.0f);  // fp8 rounding can bring (224, 232) to 224
      } else {
        EXPECT_EQ(scale_inv, 1.0f / (448.0f / amax));
        EXPECT_EQ(max_q, 448.0f);
      }
    }
  }
  for (int64_t i = 0; i < rows * cols; ++i) {
    const float scale_inv = q.scale_inv[(i / cols / block_rows) * grid_c + (i % cols) / 128];
    ASSERT_LE(std::fabs(double(dq[i]) - x[i]),
              std::max(std::fabs(x[i]) / 16.0, std::ldexp(1.0, -10) * scale_inv))
        << "i = " << i;
  }
}

TEST(QuantizeBlock, OneBy128OddShape) { CheckBlocks(131, 257, 1, true); }
TEST(QuantizeBlock, By128x128OddShape) { CheckBlocks(131, 257, 128, true); }
TEST(QuantizeBlock, NonPow2Scales) { CheckBlocks(131, 257, 1, false); }
TEST(QuantizeBlock, TinyShape) { CheckBlocks(1, 1, 128, true); }

TEST(QuantizeMxfp8, ScaleIsSmallestPow2AtLeastAmaxOver448PerBlock) {
  const int64_t rows = 131, cols = 257, blocks = 9;
  std::vector<float> x = RandomNormal(rows * cols, 3);
  for (int64_t c = 32; c < 64; ++c) x[c] = 0.0f;  // a zero block
  x[cols + 40] = 3e4f;                            // an outlier block
  const MxScaled q = QuantizeMxfp8(x, rows, cols);
  ASSERT_EQ(q.scales.size(), static_cast<size_t>(rows * blocks));
  const std::vector<float> dq = Dequantize(q);
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t b = 0; b < blocks; ++b) {
      float amax = 0, max_q = 0;
      for (int64_t c = b * 32; c < std::min(cols, b * 32 + 32); ++c) {
        amax = std::max(amax, std::fabs(x[r * cols + c]));
        max_q = std::max(max_q, std::fabs(DecodeFp8(q.data[r * cols + c], Fp8Format::kE4M3)));
      }
      const uint8_t s = q.scales[r * blocks + b];
      SCOPED_TRACE(testing::Message() << "row " << r << " block " << b << " amax " << amax);
      EXPECT_LE(max_q, 448.0f);
      if (amax == 0) {
        EXPECT_EQ(s, 0);
        EXPECT_EQ(max_q, 0.0f);
        continue;
      }
      const double target = static_cast<float>(amax / 448.0f);
      EXPECT_GE(std::ldexp(1.0, s - 127), target);
      EXPECT_LT(std::ldexp(1.0, s - 128), target);
      EXPECT_GE(max_q, 224.0f);  // fp8 rounding can bring (224, 232) to 224
    }
  }
  for (int64_t i = 0; i < rows * cols; ++i) {
    const double step = std::ldexp(1.0, q.scales[(i / cols) * blocks + (i % cols) / 32] - 127);
    ASSERT_LE(std::fabs(double(dq[i]) - x[i]),
              std::max(std::fabs(x[i]) / 16.0, std::ldexp(1.0, -10) * step))
        << "i = " << i;
  }
  EXPECT_LT(RelFrobenius(dq, x), 0.04);
}

TEST(QuantizeNvfp4, ScalesPackingAndErrorOnOddShape) {
  const int64_t rows = 131, cols = 257, blocks = 17, row_bytes = 129;
  std::vector<float> x = RandomNormal(rows * cols, 4);
  for (int64_t c = 16; c < 32; ++c) x[c] = 0.0f;  // a zero block
  const float amax = Amax(x);
  const Nvfp4Scaled q = QuantizeNvfp4(x, rows, cols);
  EXPECT_EQ(q.tensor_scale, 2688.0f / amax);
  ASSERT_EQ(q.data.size(), static_cast<size_t>(rows * row_bytes));
  ASSERT_EQ(q.scales.size(), static_cast<size_t>(rows * blocks));
  const std::vector<float> dq = Dequantize(q);
  for (int64_t r = 0; r < rows; ++r) {
    // The odd column's partner nibble is padding and stays zero.
    EXPECT_EQ(q.data[r * row_bytes + row_bytes - 1] >> 4, 0) << "row " << r;
    for (int64_t b = 0; b < blocks; ++b) {
      float bamax = 0;
      for (int64_t c = b * 16; c < std::min(cols, b * 16 + 16); ++c) {
        bamax = std::max(bamax, std::fabs(x[r * cols + c]));
      }
      const uint8_t sf = q.scales[r * blocks + b];
      EXPECT_EQ(sf, EncodeFp8((bamax / 6.0f) * q.tensor_scale, Fp8Format::kE4M3));
      EXPECT_EQ(sf & 0x80, 0);
      for (int64_t c = b * 16; c < std::min(cols, b * 16 + 16); ++c) {
        const double err = std::fabs(double(dq[r * cols + c]) - x[r * cols + c]);
        ASSERT_LE(err, 0.25 * bamax) << "row " << r << " col " << c;
      }
    }
  }
  for (int64_t i = 8; i < 16; ++i) EXPECT_EQ(q.data[i], 0) << "zero block byte " << i;
  EXPECT_EQ(q.scales[1], 0);
  EXPECT_LT(RelFrobenius(dq, x), 0.15);
}

TEST(QuantizeNvfp4, ElementTwoJIsTheLowNibble) {
  // amax 6 makes s = 448; a block amax of 6 gives sf = 448 (0x7E) and multiplier 1.
  const std::vector<float> x = {1.0f, -6.0f, 0.5f};
  const Nvfp4Scaled q = QuantizeNvfp4(x, 1, 3);
  EXPECT_EQ(q.tensor_scale, 448.0f);
  ASSERT_EQ(q.scales.size(), 1u);
  EXPECT_EQ(q.scales[0], 0x7E);
  ASSERT_EQ(q.data.size(), 2u);
  EXPECT_EQ(q.data[0], 0xF2);  // low: 1.0 = 0x2, high: -6 = 0xF
  EXPECT_EQ(q.data[1], 0x01);  // low: 0.5 = 0x1, high: padding
  EXPECT_EQ(Dequantize(q), x);
}

TEST(Nvfp4Scales, TensorScaleRules) {
  EXPECT_EQ(Nvfp4TensorScale(0.0f), 1.0f);
  EXPECT_EQ(Nvfp4TensorScale(kInf), 1.0f);
  EXPECT_EQ(Nvfp4TensorScale(2688.0f), 1.0f);
  EXPECT_EQ(Nvfp4TensorScale(1e-44f), std::numeric_limits<float>::max());
  EXPECT_EQ(Nvfp4BlockScale(6.0f, 448.0f), 0x7E);
  EXPECT_EQ(Nvfp4BlockScale(0.0f, 448.0f), 0x00);
}

TEST(MxScale, Rules) {
  EXPECT_EQ(MxScaleFromAmax(448.0f), 127);
  EXPECT_EQ(MxScaleFromAmax(449.0f), 128);
  EXPECT_EQ(MxScaleFromAmax(0.0f), 0);
  EXPECT_EQ(MxScaleFromAmax(kInf), 254);
}

TEST(Transpose, SwapsIndices) {
  const std::vector<float> x = {1, 2, 3, 4, 5, 6};  // [2, 3]
  EXPECT_EQ(Transpose(x, 2, 3), (std::vector<float>{1, 4, 2, 5, 3, 6}));
}

TEST(QuantizeDeathTest, ShapeMismatchAborts) {
  const std::vector<float> x(5);
  EXPECT_DEATH(QuantizeMxfp8(x, 2, 3), "5 elements for shape \\[2, 3\\]");
  EXPECT_DEATH(QuantizeBlock(x, 1, 5, 64), "block_rows 64");
}

}  // namespace
}  // namespace gemmprof::core::quant
