// The host reference GEMM: random operands, per-pass operand formats, the fp32 loop.
#include "device/host/host_gemm.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <vector>

#include "core/quant/quant.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace gemmprof::device {
namespace {

namespace q = core::quant;
using core::Pass;
using core::Recipe;
using ::testing::HasSubstr;

TEST(RandomNormalBf16, DeterministicBf16AndStandardNormal) {
  const std::vector<float> x = RandomNormalBf16(100001, 42);
  EXPECT_EQ(x, RandomNormalBf16(100001, 42));
  EXPECT_NE(x, RandomNormalBf16(100001, 43));
  double sum = 0, sum_sq = 0;
  for (float v : x) {
    ASSERT_EQ(v, q::RoundToBf16(v));
    ASSERT_TRUE(std::isfinite(v));
    sum += v;
    sum_sq += double(v) * v;
  }
  const double mean = sum / x.size(), var = sum_sq / x.size() - mean * mean;
  EXPECT_NEAR(mean, 0.0, 0.01);
  EXPECT_NEAR(var, 1.0, 0.02);
}

TEST(MakeHostOperands, SizesHistoriesAndIndependenceFromHistoryLength) {
  const HostOperands a = MakeHostOperands({3, 5, 7}, 2, 9, 0);
  const HostOperands b = MakeHostOperands({3, 5, 7}, 2, 9, 4);
  EXPECT_EQ(a.a.size(), 30u);
  EXPECT_EQ(a.b.size(), 70u);
  EXPECT_TRUE(a.a_amax_history.empty());
  EXPECT_EQ(b.a_amax_history.size(), 8u);
  EXPECT_EQ(b.b_amax_history.size(), 8u);
  EXPECT_EQ(a.a, b.a);
  EXPECT_EQ(a.b, b.b);
  EXPECT_NE(a.a, MakeHostOperands({3, 5, 7}, 2, 10, 0).a);
}

TEST(Roles, FollowThePasses) {
  EXPECT_EQ(RoleOfA(Pass::kFprop), OperandRole::kActivation);
  EXPECT_EQ(RoleOfB(Pass::kFprop), OperandRole::kWeight);
  EXPECT_EQ(RoleOfA(Pass::kDgrad), OperandRole::kGradient);
  EXPECT_EQ(RoleOfB(Pass::kDgrad), OperandRole::kWeight);
  EXPECT_EQ(RoleOfA(Pass::kWgrad), OperandRole::kActivation);
  EXPECT_EQ(RoleOfB(Pass::kWgrad), OperandRole::kGradient);
}

TEST(GemmFp32, MatchesNaiveLoopAndIsThreadCountIndependent) {
  const int64_t m = 37, k = 131, n = 300;  // n above one 256-wide block, k above 64
  const std::vector<float> a = RandomNormalBf16(m * k, 1), b = RandomNormalBf16(n * k, 2);
  std::vector<float> c1(m * n), c3(m * n);
  GemmFp32(a, b, m, k, n, c1, 1);
  GemmFp32(a, b, m, k, n, c3, 3);
  EXPECT_EQ(c1, c3);
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      float naive = 0;  // same k order, so the same rounding
      for (int64_t kk = 0; kk < k; ++kk) naive += a[i * k + kk] * b[j * k + kk];
      ASSERT_EQ(c1[i * n + j], naive) << i << "," << j;
    }
  }
}

// Rebuilds the expected output from the quant API directly, operand formats spelled out.
std::vector<float> Expected(const HostOperands& ops, std::vector<float> a_dq,
                            std::vector<float> b_dq) {
  std::vector<float> c(ops.m * ops.n);
  GemmFp32(a_dq, b_dq, ops.m, ops.k, ops.n, c, 1);
  return c;
}

TEST(HostReferenceGemm, UsesEachPassesRealOperandFormats) {
  const HostOperands ops = MakeHostOperands({19, 133, 21}, 1, 5, 0);
  const auto run = [&](Recipe r, Pass p) { return HostReferenceGemm(r, p, ops, {}, 2)->out; };
  const auto e4 = [&](const std::vector<float>& x, int64_t rows) {
    return q::Dequantize(q::QuantizeCurrent(x, rows, ops.k, q::Fp8Format::kE4M3),
                         q::Fp8Format::kE4M3);
  };
  const auto e5 = [&](const std::vector<float>& x, int64_t rows) {
    return q::Dequantize(q::QuantizeCurrent(x, rows, ops.k, q::Fp8Format::kE5M2),
                         q::Fp8Format::kE5M2);
  };
  EXPECT_EQ(run(Recipe::kFp8Current, Pass::kFprop), Expected(ops, e4(ops.a, 19), e4(ops.b, 21)));
  EXPECT_EQ(run(Recipe::kFp8Current, Pass::kDgrad), Expected(ops, e5(ops.a, 19), e4(ops.b, 21)));
  EXPECT_EQ(run(Recipe::kFp8Current, Pass::kWgrad), Expected(ops, e4(ops.a, 19), e5(ops.b, 21)));
  EXPECT_EQ(run(Recipe::kFp8Block, Pass::kFprop),
            Expected(ops, q::Dequantize(q::QuantizeBlock(ops.a, 19, ops.k, 1)),
                     q::Dequantize(q::QuantizeBlock(ops.b, 21, ops.k, 128))));
  EXPECT_EQ(run(Recipe::kFp8Block, Pass::kWgrad),
            Expected(ops, q::Dequantize(q::QuantizeBlock(ops.a, 19, ops.k, 1)),
                     q::Dequantize(q::QuantizeBlock(ops.b, 21, ops.k, 1))));
  EXPECT_EQ(run(Recipe::kMxfp8, Pass::kDgrad),
            Expected(ops, q::Dequantize(q::QuantizeMxfp8(ops.a, 19, ops.k)),
                     q::Dequantize(q::QuantizeMxfp8(ops.b, 21, ops.k))));
  EXPECT_EQ(run(Recipe::kNvfp4, Pass::kFprop),
            Expected(ops, q::Dequantize(q::QuantizeNvfp4(ops.a, 19, ops.k)),
                     q::Dequantize(q::QuantizeNvfp4(ops.b, 21, ops.k))));
  EXPECT_EQ(run(Recipe::kBf16, Pass::kFprop), Expected(ops, ops.a, ops.b));
}

TEST(HostReferenceGemm, DelayedWithCurrentAmaxEqualsCurrentScaling) {
  HostOperands ops = MakeHostOperands({17, 65, 9}, 1, 6, 0);
  ops.a_amax_history = {q::Amax(ops.a), 1000.0f};
  ops.b_amax_history = {q::Amax(ops.b), 1000.0f};
  const auto current = HostReferenceGemm(Recipe::kFp8Current, Pass::kDgrad, ops, {}, 1);
  const auto recent =
      HostReferenceGemm(Recipe::kFp8Delayed, Pass::kDgrad, ops, core::AmaxAlgo::kMostRecent, 1);
  const auto max =
      HostReferenceGemm(Recipe::kFp8Delayed, Pass::kDgrad, ops, core::AmaxAlgo::kMax, 1);
  ASSERT_TRUE(current.ok() && recent.ok() && max.ok());
  EXPECT_EQ(recent->out, current->out);
  EXPECT_NE(max->out, current->out);  // amax 1000 wastes range: a coarser, different result
  EXPECT_GT(max->rel_error, recent->rel_error);
}

TEST(HostReferenceGemm, GroupsRunIndependently) {
  const HostOperands ops = MakeHostOperands({5, 33, 7}, 3, 7, 2);
  const auto r = HostReferenceGemm(Recipe::kFp8Delayed, Pass::kFprop, ops, {}, 2);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->out.size(), 3u * 5 * 7);
  EXPECT_EQ(r->reference.size(), 3u * 5 * 7);
  EXPECT_LT(r->rel_error, ErrorThreshold(Recipe::kFp8Delayed));
  // Group 1's output equals a one-group run on group 1's operands.
  HostOperands g1;
  g1.m = 5, g1.k = 33, g1.n = 7;
  g1.a.assign(ops.a.begin() + 165, ops.a.begin() + 330);
  g1.b.assign(ops.b.begin() + 231, ops.b.begin() + 462);
  g1.a_amax_history.assign(ops.a_amax_history.begin() + 2, ops.a_amax_history.begin() + 4);
  g1.b_amax_history.assign(ops.b_amax_history.begin() + 2, ops.b_amax_history.begin() + 4);
  const auto one = HostReferenceGemm(Recipe::kFp8Delayed, Pass::kFprop, g1, {}, 1);
  ASSERT_TRUE(one.ok());
  EXPECT_EQ(std::vector<float>(r->out.begin() + 35, r->out.begin() + 70), one->out);
}

// Routed experts at uneven tokens (fprop): each expert's GEMM runs its own rows, the
// rows past its tokens (and an expert without tokens) stay zero. Against an independent
// computation: per-row E4M3 scales worked out here from each row's amax (fp8-rowwise),
// the dequantized rows multiplied in double.
TEST(HostReferenceGemm, RoutedExpertsRunTheirOwnRowsWithTheirOwnRowScales) {
  core::GemmOp op;
  op.pass = Pass::kFprop;
  op.shape = {5, 32, 24};
  op.groups = 4;
  op.group_tokens = {3, 0, 5, 1};
  const HostOperands drawn = MakeHostOperands(op.shape, op.groups, 11, 0);
  HostOperands ops = drawn;
  ApplyGroupTokens(op, ops);
  EXPECT_EQ(ops.rows, op.group_tokens);
  const auto r = HostReferenceGemm(Recipe::kFp8Rowwise, Pass::kFprop, ops, {}, 2);
  ASSERT_TRUE(r.ok()) << r.status();
  const int64_t m = 5, k = 32, n = 24;
  auto dequant_row = [&](const float* x) {
    float amax = 0;
    for (int64_t j = 0; j < k; ++j) amax = std::max(amax, std::fabs(x[j]));
    const float scale = amax > 0 ? 448.0f / amax : 1.0f;
    std::vector<double> out(k);
    for (int64_t j = 0; j < k; ++j) {
      out[j] = q::DecodeFp8(q::EncodeFp8(x[j] * scale, q::Fp8Format::kE4M3), q::Fp8Format::kE4M3) /
               static_cast<double>(scale);
    }
    return out;
  };
  for (int64_t g = 0; g < 4; ++g) {
    for (int64_t i = 0; i < m; ++i) {
      const bool token = i < op.group_tokens[g];
      const std::vector<double> a =
          token ? dequant_row(&drawn.a[(g * m + i) * k]) : std::vector<double>(k, 0.0);
      for (int64_t j = 0; j < n; ++j) {
        const std::vector<double> b = dequant_row(&drawn.b[(g * n + j) * k]);
        double want = 0;
        for (int64_t kk = 0; kk < k; ++kk) want += a[kk] * b[kk];
        const float got = r->out[(g * m + i) * n + j];
        if (!token) {
          ASSERT_EQ(got, 0.0f) << "expert " << g << " row " << i << " has no token";
        } else {
          EXPECT_NEAR(got, want, 1e-4 * (1 + std::fabs(want))) << g << " " << i << " " << j;
        }
      }
    }
  }
  EXPECT_LT(r->rel_error, ErrorThreshold(Recipe::kFp8Rowwise));
  // The padding is zeros: the rows past each expert's tokens in A.
  EXPECT_EQ(ops.a[(0 * m + 3) * k], 0.0f);
  EXPECT_EQ(ops.a[(1 * m + 0) * k + 7], 0.0f);
  EXPECT_EQ(ops.a[(2 * m + 4) * k], drawn.a[(2 * m + 4) * k]);
}

// wgrad: the experts' tokens are K; the columns past each expert's tokens are zeros in A
// and B, so every expert at the capacity K computes its own tokens' sum (expert 1: zero).
TEST(HostReferenceGemm, RoutedExpertsInWgradZeroTheirPaddedK) {
  core::GemmOp op;
  op.pass = Pass::kWgrad;
  op.shape = {6, 32, 8};
  op.groups = 3;
  op.group_tokens = {16, 0, 32};
  HostOperands ops = MakeHostOperands(op.shape, op.groups, 5, 0);
  const HostOperands drawn = ops;
  ApplyGroupTokens(op, ops);
  EXPECT_TRUE(ops.rows.empty());
  const auto r = HostReferenceGemm(Recipe::kBf16, Pass::kWgrad, ops, {}, 1);
  ASSERT_TRUE(r.ok()) << r.status();
  for (int64_t g = 0; g < 3; ++g) {
    for (int64_t i = 0; i < 6; ++i) {
      for (int64_t j = 0; j < 8; ++j) {
        double want = 0;
        for (int64_t kk = 0; kk < op.group_tokens[g]; ++kk) {
          want += double(drawn.a[(g * 6 + i) * 32 + kk]) * double(drawn.b[(g * 8 + j) * 32 + kk]);
        }
        EXPECT_NEAR(r->reference[(g * 6 + i) * 8 + j], want, 1e-9) << g << " " << i << " " << j;
      }
    }
  }
}

TEST(HostReferenceGemm, RejectsBadOperands) {
  HostOperands ops = MakeHostOperands({4, 8, 2}, 1, 1, 0);
  ops.a.pop_back();
  auto r = HostReferenceGemm(Recipe::kBf16, Pass::kFprop, ops, {}, 1);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(r.status().message(), HasSubstr("operands.a: 31 elements, expected 32"));

  ops = MakeHostOperands({4, 8, 2}, 1, 1, 0);
  r = HostReferenceGemm(Recipe::kFp8Delayed, Pass::kFprop, ops, {}, 1);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(r.status().message(), HasSubstr("fp8-delayed needs"));

  ops.k = 0;
  r = HostReferenceGemm(Recipe::kBf16, Pass::kFprop, ops, {}, 1);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(r.status().message(), HasSubstr("k=0"));
}

TEST(HostReferenceGemm, SpanOverloadMatchesOperandsFromTheSameSeed) {
  core::TimingOptions t;
  t.seed = 77;
  t.amax_history_len = 3;
  t.amax_algo = core::AmaxAlgo::kMostRecent;
  const HostOperands ops = MakeHostOperands({9, 70, 11}, 1, 77, 3);
  for (Recipe r : core::AllRecipes()) {
    const auto from_spans = HostReferenceGemm(r, Pass::kDgrad, ops.a, ops.b, 9, 70, 11, t, 1);
    const auto from_ops = HostReferenceGemm(r, Pass::kDgrad, ops, t.amax_algo, 1);
    ASSERT_TRUE(from_spans.ok()) << from_spans.status();
    ASSERT_TRUE(from_ops.ok());
    EXPECT_EQ(from_spans->out, from_ops->out) << core::ToString(r);
  }
  t.amax_history_len = 0;
  const auto no_history =
      HostReferenceGemm(Recipe::kFp8Delayed, Pass::kDgrad, ops.a, ops.b, 9, 70, 11, t, 1);
  EXPECT_EQ(no_history.status().code(), absl::StatusCode::kInvalidArgument);
  const auto bad_shape = HostReferenceGemm(Recipe::kBf16, Pass::kFprop, ops.a, ops.b, 9, 70, 12, t);
  EXPECT_THAT(bad_shape.status().message(), HasSubstr("operands.b: 770 elements, expected 840"));
}

// E4M3 rounding written from the format's definition (3 mantissa bits, exponent bias 7,
// subnormals below 2^-6, saturation at 448, ties to even), not from core/quant's encoder.
float RoundE4m3Independently(float v) {
  const double a = std::fabs(static_cast<double>(v));
  if (a == 0) return v;
  const int e = std::max(static_cast<int>(std::floor(std::log2(a))), -6);
  const double quantum = std::ldexp(1.0, e - 3);
  double r = std::nearbyint(a / quantum) * quantum;  // the default mode: ties to even
  r = std::min(r, 448.0);
  return static_cast<float>(std::copysign(r, static_cast<double>(v)));
}

// Each row dequantized with its own scale 448 / amax(row), computed here from scratch.
std::vector<float> RowwiseDequantizedIndependently(const std::vector<float>& x, int64_t rows,
                                                   int64_t cols) {
  std::vector<float> out(x.size());
  for (int64_t r = 0; r < rows; ++r) {
    float amax = 0;
    for (int64_t c = 0; c < cols; ++c) amax = std::max(amax, std::fabs(x[r * cols + c]));
    const float scale = amax > 0 ? 448.0f / amax : 1.0f;
    const float scale_inv = 1.0f / scale;
    for (int64_t c = 0; c < cols; ++c) {
      out[r * cols + c] = RoundE4m3Independently(x[r * cols + c] * scale) * scale_inv;
    }
  }
  return out;
}

// fp8-rowwise: one scale per row of A (per token) and per row of B = [N, K] (per output
// channel), E4M3 in every pass; matches a computation that shares no code with core/quant.
TEST(HostReferenceGemm, RowwiseMatchesAnIndependentComputation) {
  const HostOperands ops = MakeHostOperands({19, 133, 21}, 1, 11, 0);
  const std::vector<float> want = Expected(ops, RowwiseDequantizedIndependently(ops.a, 19, ops.k),
                                           RowwiseDequantizedIndependently(ops.b, 21, ops.k));
  for (Pass p : {Pass::kFprop, Pass::kDgrad, Pass::kWgrad}) {
    const auto got = HostReferenceGemm(Recipe::kFp8Rowwise, p, ops, {}, 2);
    ASSERT_TRUE(got.ok()) << got.status();
    EXPECT_EQ(got->out, want) << core::ToString(p);
    EXPECT_LT(got->rel_error, ErrorThreshold(Recipe::kFp8Rowwise));
  }
}

TEST(QuantizedOperand, BytesFollowTheFormats) {
  const std::vector<float> x = RandomNormalBf16(131 * 257, 3);
  const auto bytes = [&](Recipe r, OperandRole role) {
    return QuantizedOperand::Quantize(r, role, x, 131, 257, {}, {}).Bytes();
  };
  EXPECT_EQ(bytes(Recipe::kBf16, OperandRole::kActivation), 2.0 * 131 * 257);
  EXPECT_EQ(bytes(Recipe::kFp8Current, OperandRole::kGradient), 131.0 * 257 + 4);
  EXPECT_EQ(bytes(Recipe::kFp8Block, OperandRole::kWeight), 131.0 * 257 + 4 * 2 * 3);
  EXPECT_EQ(bytes(Recipe::kFp8Block, OperandRole::kActivation), 131.0 * 257 + 4 * 131 * 3);
  EXPECT_EQ(bytes(Recipe::kMxfp8, OperandRole::kActivation), 131.0 * 257 + 131 * 9);
  EXPECT_EQ(bytes(Recipe::kNvfp4, OperandRole::kActivation), 131.0 * 129 + 131 * 17 + 4);
  EXPECT_EQ(bytes(Recipe::kFp8Rowwise, OperandRole::kWeight), 131.0 * 257 + 4 * 131);
}

TEST(ErrorThreshold, OrderedAndPositive) {
  EXPECT_LT(ErrorThreshold(Recipe::kBf16), ErrorThreshold(Recipe::kFp8Block));
  EXPECT_LT(ErrorThreshold(Recipe::kFp8Block), ErrorThreshold(Recipe::kFp8Current));
  EXPECT_EQ(ErrorThreshold(Recipe::kFp8Current), ErrorThreshold(Recipe::kFp8Delayed));
  EXPECT_LT(ErrorThreshold(Recipe::kFp8Current), ErrorThreshold(Recipe::kNvfp4));
  EXPECT_GT(ErrorThreshold(Recipe::kBf16), 0.0);
}

}  // namespace
}  // namespace gemmprof::device
