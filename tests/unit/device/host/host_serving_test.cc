// The serving recipes on the host (int8-rowwise, w8a16, w4a16): the quantizers' rules
// (core/quant/integer_quant.h) and the host reference GEMM against computations that share
// no code with core/quant, and their refusal outside fprop.
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <vector>

#include "core/quant/integer_quant.h"
#include "device/host/host_gemm.h"
#include "device/host/host_runner.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace gemmprof::device {
namespace {

namespace q = core::quant;
using core::Pass;
using core::Recipe;
using ::testing::HasSubstr;

// Round half to even, written with floor (the quantizers use nearbyint).
double RoundHalfEven(double x) {
  const double f = std::floor(x);
  const double d = x - f;
  if (d > 0.5) return f + 1;
  if (d < 0.5) return f;
  return std::fmod(f, 2.0) == 0 ? f : f + 1;
}

// BF16 round to nearest even by bit arithmetic on finite positive values.
float Bf16(float x) {
  const uint32_t bits = std::bit_cast<uint32_t>(x);
  const uint32_t rounded = bits + 0x7FFF + ((bits >> 16) & 1);
  return std::bit_cast<float>(rounded & 0xFFFF0000u);
}

float RowAmax(const std::vector<float>& x, int64_t r, int64_t c0, int64_t c1, int64_t cols) {
  float amax = 0;
  for (int64_t c = c0; c < c1; ++c) amax = std::max(amax, std::fabs(x[r * cols + c]));
  return amax;
}

// C = A B^T in fp32 with K summed in order, as the host's loop does.
std::vector<float> Fp32Gemm(const std::vector<float>& a, const std::vector<float>& b, int64_t m,
                            int64_t k, int64_t n) {
  std::vector<float> c(m * n, 0.0f);
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      float acc = 0;
      for (int64_t kk = 0; kk < k; ++kk) acc += a[i * k + kk] * b[j * k + kk];
      c[i * n + j] = acc;
    }
  }
  return c;
}

TEST(Int8Rowwise, QuantizesPerRowWithRoundHalfEvenAndASymmetricRange) {
  // amax 2 -> scale 63.5: 1 -> 63.5 -> 64 (tie to even), -2 -> -127, 0.5 -> 31.75 -> 32.
  const std::vector<float> x = {1.0f, -2.0f, 0.5f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f};
  const q::Int8RowScaled got = q::QuantizeInt8Rowwise(x, 2, 4);
  EXPECT_THAT(got.data, ::testing::ElementsAre(64, -127, 32, 0, 0, 0, 0, 0));
  EXPECT_EQ(got.scale_inv[0], 1.0f / 63.5f);
  EXPECT_EQ(got.scale_inv[1], 1.0f);  // an all-zero row: scale 1
  EXPECT_EQ(q::RoundToInt(NAN, -127, 127), 0);
  EXPECT_EQ(q::RoundToInt(1e30f, -127, 127), 127);
  EXPECT_EQ(q::RoundToInt(-2.5f, -127, 127), -2);
}

TEST(Int8Rowwise, HostGemmIsTheExactInt32ProductWithItsScales) {
  const int64_t m = 9, k = 301, n = 7;
  const HostOperands ops = MakeHostOperands({m, k, n}, 1, 5, 0);
  // Independently: per-row scales, integer values, an exact integer sum, then the scales.
  const auto quantize = [&](const std::vector<float>& x, int64_t rows) {
    std::vector<int32_t> v(rows * k);
    std::vector<float> inv(rows);
    for (int64_t r = 0; r < rows; ++r) {
      const float scale = 127.0f / RowAmax(x, r, 0, k, k);
      inv[r] = 1.0f / scale;
      for (int64_t c = 0; c < k; ++c) {
        v[r * k + c] = static_cast<int32_t>(
            std::clamp(RoundHalfEven(static_cast<double>(x[r * k + c] * scale)), -127.0, 127.0));
      }
    }
    return std::pair{v, inv};
  };
  const auto [qa, ia] = quantize(ops.a, m);
  const auto [qb, ib] = quantize(ops.b, n);
  std::vector<float> want(m * n);
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      int64_t acc = 0;
      for (int64_t c = 0; c < k; ++c) acc += int64_t{qa[i * k + c]} * qb[j * k + c];
      want[i * n + j] = static_cast<float>(acc) * ia[i] * ib[j];
    }
  }
  const auto got = HostReferenceGemm(Recipe::kInt8Rowwise, Pass::kFprop, ops, {}, 2);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->out, want);
  EXPECT_LT(got->rel_error, ErrorThreshold(Recipe::kInt8Rowwise));
}

TEST(W8a16, WeightPerChannelWithBf16ScalesActivationUntouched) {
  const int64_t m = 11, k = 263, n = 13;
  const HostOperands ops = MakeHostOperands({m, k, n}, 1, 9, 0);
  std::vector<float> w(n * k);
  for (int64_t r = 0; r < n; ++r) {
    const float s = Bf16(RowAmax(ops.b, r, 0, k, k) / 127.0f);
    for (int64_t c = 0; c < k; ++c) {
      w[r * k + c] = static_cast<float>(std::clamp(
                         RoundHalfEven(static_cast<double>(ops.b[r * k + c] / s)), -127.0, 127.0)) *
                     s;
    }
  }
  const auto got = HostReferenceGemm(Recipe::kW8a16, Pass::kFprop, ops, {}, 2);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->out, Fp32Gemm(ops.a, w, m, k, n));
  EXPECT_LT(got->rel_error, ErrorThreshold(Recipe::kW8a16));
  // Only the weight is quantized: A's operand is BF16, 2 bytes an element.
  EXPECT_EQ(
      QuantizedOperand::Quantize(Recipe::kW8a16, OperandRole::kActivation, ops.a, m, k, {}, {})
          .Bytes(),
      2.0 * m * k);
  EXPECT_EQ(
      QuantizedOperand::Quantize(Recipe::kW8a16, OperandRole::kWeight, ops.b, n, k, {}, {}).Bytes(),
      1.0 * n * k + 2.0 * n);
}

TEST(W4a16, PacksTwoNibblesPerByteLowFirstWithAGroupScale) {
  // One row, group 4: amax 7 -> s = 1; values round half to even and clamp to [-8, 7].
  const std::vector<float> x = {1.0f, -2.0f, 7.0f, -7.0f, 2.5f};
  const q::Int4GroupScaled got = q::QuantizeW4(x, 1, 5, 4);
  ASSERT_EQ(got.packed.size(), 3u);  // 5 elements: the last byte's high nibble is 0
  EXPECT_EQ(got.packed[0], 0xE1);    // 1 low, -2 (0xE) high
  EXPECT_EQ(got.packed[1], 0x97);    // 7 low, -7 (0x9) high
  // The second group (2.5 alone): s = bf16(2.5 / 7), 2.5 / s rounds to 7.
  EXPECT_EQ(got.scales[0], 1.0f);
  EXPECT_EQ(got.scales[1], Bf16(2.5f / 7.0f));
  EXPECT_EQ(got.packed[2], 0x07);
  EXPECT_THAT(
      std::vector<int32_t>({got.At(0, 0), got.At(0, 1), got.At(0, 2), got.At(0, 3), got.At(0, 4)}),
      ::testing::ElementsAre(1, -2, 7, -7, 7));
  // The group's amax lands on -7, not -8: -8.4 / bf16(8.4 / 7) = -6.98.
  const q::Int4GroupScaled low = q::QuantizeW4(std::vector<float>{-8.4f, 1.0f}, 1, 2, 128);
  EXPECT_EQ(low.At(0, 0), -7);
  EXPECT_EQ(low.scales[0], Bf16(8.4f / 7.0f));
  // BF16 subnormals whose scale would round to 0: scale 1, every value 0.
  const q::Int4GroupScaled tiny = q::QuantizeW4(std::vector<float>{1e-40f, -1e-40f}, 1, 2, 128);
  EXPECT_EQ(tiny.scales[0], 1.0f);
  EXPECT_EQ(tiny.packed[0], 0x00);
}

TEST(W4a16, HostGemmMatchesAnIndependentDequantizationForBothGroupSizes) {
  const int64_t m = 5, k = 300, n = 9;  // K not a multiple of either group
  HostOperands ops = MakeHostOperands({m, k, n}, 1, 13, 0);
  double error_64 = 0, error_128 = 0;
  for (int64_t group : {64, 128}) {
    std::vector<float> w(n * k);
    for (int64_t r = 0; r < n; ++r) {
      for (int64_t c0 = 0; c0 < k; c0 += group) {
        const int64_t c1 = std::min(k, c0 + group);
        const float s = Bf16(RowAmax(ops.b, r, c0, c1, k) / 7.0f);
        for (int64_t c = c0; c < c1; ++c) {
          w[r * k + c] = static_cast<float>(std::clamp(
                             RoundHalfEven(static_cast<double>(ops.b[r * k + c] / s)), -8.0, 7.0)) *
                         s;
        }
      }
    }
    ops.w4_group = group;
    const auto got = HostReferenceGemm(Recipe::kW4a16, Pass::kFprop, ops, {}, 2);
    ASSERT_TRUE(got.ok()) << got.status();
    EXPECT_EQ(got->out, Fp32Gemm(ops.a, w, m, k, n)) << "group " << group;
    EXPECT_LT(got->rel_error, ErrorThreshold(Recipe::kW4a16));
    (group == 64 ? error_64 : error_128) = got->rel_error;
    const double bytes =
        QuantizedOperand::Quantize(Recipe::kW4a16, OperandRole::kWeight, ops.b, n, k, {}, {}, group)
            .Bytes();
    EXPECT_EQ(bytes, n * 150.0 + 2.0 * n * ((k + group - 1) / group));
  }
  // Smaller groups follow the weights more closely.
  EXPECT_LT(error_64, error_128);
}

// The errors the thresholds are set from: random normal BF16 operands, fprop, M = 33 and
// N = 47 as the other recipes' thresholds were chosen, K in {1, 3, 31, 257, 1024, 4096}.
TEST(ServingRecipes, ErrorsOverKStayUnderTheirThresholds) {
  for (Recipe r : {Recipe::kInt8Rowwise, Recipe::kW8a16, Recipe::kW4a16}) {
    double worst = 0;
    for (int64_t k : {1, 3, 31, 257, 1024, 4096}) {
      for (uint64_t seed : {1, 2, 3}) {
        const HostOperands ops = MakeHostOperands({33, k, 47}, 1, seed, 0);
        const auto got = HostReferenceGemm(r, Pass::kFprop, ops, {}, 2);
        ASSERT_TRUE(got.ok()) << got.status();
        worst = std::max(worst, got->rel_error);
      }
    }
    std::printf("%s: worst relative error %.4f, threshold %.4f\n",
                std::string(core::ToString(r)).c_str(), worst, ErrorThreshold(r));
    EXPECT_LT(worst, ErrorThreshold(r)) << core::ToString(r);
  }
}

TEST(ServingRecipes, AreFpropOnlyOnTheHostRunner) {
  HostRunner runner;
  core::WorkItem item;
  item.op.shape = {16, 64, 32};
  for (Recipe r : {Recipe::kInt8Rowwise, Recipe::kW8a16, Recipe::kW4a16}) {
    item.recipe = r;
    item.op.pass = Pass::kFprop;
    EXPECT_TRUE(CanImplementOne(runner, item, {}).ok()) << core::ToString(r);
    for (Pass p : {Pass::kDgrad, Pass::kWgrad}) {
      item.op.pass = p;
      const absl::Status s = CanImplementOne(runner, item, {});
      EXPECT_TRUE(absl::IsFailedPrecondition(s)) << s;
      EXPECT_THAT(s.message(), HasSubstr("is a serving recipe: fprop only"));
    }
  }
}

}  // namespace
}  // namespace gemmprof::device
