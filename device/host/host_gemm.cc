#include "device/host/host_gemm.h"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <random>
#include <string>
#include <thread>

#include "absl/strings/str_cat.h"

namespace gemmprof::device {
namespace {

namespace q = core::quant;
using core::Recipe;

// Cache blocking of the fp32 loop: a 64 x 256 slab of B^T (64 KiB) stays in L2 while the
// rows of A stream past it.
constexpr int64_t kBlockK = 64;
constexpr int64_t kBlockN = 256;

// C rows [row0, row1) of C = A * Bt with Bt row-major [k, n]. Accumulates in T. The inner
// loop is an axpy over n, which the compiler vectorizes without reassociating any sum.
template <typename T>
void GemmRows(const float* a, const float* bt, int64_t k, int64_t n, int64_t row0, int64_t row1,
              T* c) {
  std::fill(c + row0 * n, c + row1 * n, T{0});
  for (int64_t k0 = 0; k0 < k; k0 += kBlockK) {
    const int64_t k1 = std::min(k, k0 + kBlockK);
    for (int64_t n0 = 0; n0 < n; n0 += kBlockN) {
      const int64_t n1 = std::min(n, n0 + kBlockN);
      for (int64_t i = row0; i < row1; ++i) {
        T* crow = c + i * n;
        for (int64_t kk = k0; kk < k1; ++kk) {
          const T aik = a[i * k + kk];
          const float* brow = bt + kk * n;
          for (int64_t j = n0; j < n1; ++j) crow[j] += aik * static_cast<T>(brow[j]);
        }
      }
    }
  }
}

template <typename T>
void GemmParallel(std::span<const float> a, std::span<const float> b, int64_t m, int64_t k,
                  int64_t n, T* c, int threads) {
  const std::vector<float> bt = q::Transpose(b, n, k);
  const int64_t workers = std::clamp<int64_t>(threads, 1, std::max<int64_t>(m, 1));
  if (workers == 1) {
    GemmRows<T>(a.data(), bt.data(), k, n, 0, m, c);
    return;
  }
  std::vector<std::jthread> pool;
  const int64_t per = (m + workers - 1) / workers;
  for (int64_t w = 0; w < workers; ++w) {
    const int64_t r0 = w * per, r1 = std::min(m, r0 + per);
    if (r0 >= r1) break;
    pool.emplace_back([&, r0, r1] { GemmRows<T>(a.data(), bt.data(), k, n, r0, r1, c); });
  }
}

absl::Status CheckOperands(Recipe recipe, const HostOperands& ops) {
  if (ops.m < 1 || ops.k < 1 || ops.n < 1 || ops.groups < 1) {
    return absl::InvalidArgumentError(absl::StrCat("operands: m=", ops.m, " k=", ops.k,
                                                   " n=", ops.n, " groups=", ops.groups,
                                                   "; every one must be >= 1"));
  }
  const auto expect = [](const char* name, size_t got, int64_t want) -> absl::Status {
    if (static_cast<int64_t>(got) == want) return absl::OkStatus();
    return absl::InvalidArgumentError(
        absl::StrCat("operands.", name, ": ", got, " elements, expected ", want));
  };
  RETURN_IF_ERROR(expect("a", ops.a.size(), ops.groups * ops.m * ops.k));
  RETURN_IF_ERROR(expect("b", ops.b.size(), ops.groups * ops.n * ops.k));
  if (recipe == Recipe::kFp8Delayed) {
    if (ops.a_amax_history.empty() || ops.b_amax_history.empty() ||
        ops.a_amax_history.size() % ops.groups != 0 ||
        ops.a_amax_history.size() != ops.b_amax_history.size()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "operands: fp8-delayed needs equal, non-empty amax histories per group; got ",
          ops.a_amax_history.size(), " (a) and ", ops.b_amax_history.size(), " (b) for ",
          ops.groups, " groups"));
    }
  }
  return absl::OkStatus();
}

}  // namespace

double ErrorThreshold(Recipe recipe) {
  switch (recipe) {
    case Recipe::kBf16:
      return 1e-2;
    case Recipe::kFp8Current:
    case Recipe::kFp8Delayed:
      return 1.2e-1;
    case Recipe::kFp8Block:
    case Recipe::kMxfp8:
      return 8e-2;
    case Recipe::kNvfp4:
      return 3e-1;
    case Recipe::kFp8Rowwise:
      return 8e-2;
    case Recipe::kInt8Rowwise:
      return 2.5e-2;
    case Recipe::kW8a16:
      return 2e-2;
    case Recipe::kW4a16:
      return 2.2e-1;
  }
  return 0;
}

OperandRole RoleOfA(core::Pass pass) {
  return pass == core::Pass::kDgrad ? OperandRole::kGradient : OperandRole::kActivation;
}

OperandRole RoleOfB(core::Pass pass) {
  return pass == core::Pass::kWgrad ? OperandRole::kGradient : OperandRole::kWeight;
}

std::vector<float> RandomNormalBf16(int64_t count, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<float> out(count);
  // 53 random bits -> (0, 1]; the +1 keeps log() away from 0.
  const auto uniform = [&rng] { return (static_cast<double>(rng() >> 11) + 1.0) * 0x1p-53; };
  for (int64_t i = 0; i < count; i += 2) {
    const double radius = std::sqrt(-2.0 * std::log(uniform()));
    const double angle = 2.0 * std::numbers::pi * uniform();
    out[i] = q::RoundToBf16(static_cast<float>(radius * std::cos(angle)));
    if (i + 1 < count) out[i + 1] = q::RoundToBf16(static_cast<float>(radius * std::sin(angle)));
  }
  return out;
}

HostOperands MakeHostOperands(const core::GemmShape& shape, int64_t groups, uint64_t seed,
                              int32_t history_len) {
  HostOperands ops;
  ops.m = shape.m;
  ops.k = shape.k;
  ops.n = shape.n;
  ops.groups = groups;
  // Independent streams per tensor from one seed (splitmix-style offsets), so A does not
  // change when the history length does.
  const auto stream = [seed](uint64_t i) { return seed + 0x9E3779B97F4A7C15ull * (i + 1); };
  ops.a = RandomNormalBf16(groups * shape.m * shape.k, stream(0));
  ops.b = RandomNormalBf16(groups * shape.n * shape.k, stream(1));
  for (int64_t g = 0; g < groups; ++g) {
    for (int32_t h = 0; h < history_len; ++h) {
      const uint64_t id = 2 + 2 * (static_cast<uint64_t>(g) * history_len + h);
      ops.a_amax_history.push_back(q::Amax(RandomNormalBf16(shape.m * shape.k, stream(id))));
      ops.b_amax_history.push_back(q::Amax(RandomNormalBf16(shape.n * shape.k, stream(id + 1))));
    }
  }
  return ops;
}

void ApplyGroupTokens(const core::GemmOp& op, HostOperands& ops) {
  if (op.group_tokens.empty()) return;
  for (int64_t g = 0; g < ops.groups; ++g) {
    const int64_t t = op.group_tokens[g];
    if (op.pass != core::Pass::kWgrad) {
      std::fill(ops.a.begin() + (g * ops.m + t) * ops.k, ops.a.begin() + (g + 1) * ops.m * ops.k,
                0.0f);
      continue;
    }
    for (auto [v, rows] : {std::pair{&ops.a, ops.m}, std::pair{&ops.b, ops.n}}) {
      for (int64_t r = 0; r < rows; ++r) {
        const auto row = v->begin() + (g * rows + r) * ops.k;
        std::fill(row + t, row + ops.k, 0.0f);
      }
    }
  }
  if (op.pass != core::Pass::kWgrad) ops.rows = op.group_tokens;
}

void GemmFp32(std::span<const float> a, std::span<const float> b, int64_t m, int64_t k, int64_t n,
              std::span<float> c, int threads) {
  GemmParallel<float>(a, b, m, k, n, c.data(), threads);
}

QuantizedOperand QuantizedOperand::Quantize(Recipe recipe, OperandRole role,
                                            std::span<const float> x, int64_t rows, int64_t cols,
                                            std::span<const float> amax_history,
                                            core::AmaxAlgo amax_algo, int64_t w4_group) {
  const q::Fp8Format fp8 =
      role == OperandRole::kGradient ? q::Fp8Format::kE5M2 : q::Fp8Format::kE4M3;
  switch (recipe) {
    case Recipe::kBf16:
      return QuantizedOperand(std::vector<float>(x.begin(), x.end()));
    case Recipe::kFp8Current:
      return QuantizedOperand(Fp8Tensor{q::QuantizeCurrent(x, rows, cols, fp8), fp8});
    case Recipe::kFp8Delayed: {
      const float scale = q::DelayedScale(amax_history, amax_algo, fp8);
      return QuantizedOperand(Fp8Tensor{q::QuantizeWithScale(x, rows, cols, scale, fp8), fp8});
    }
    case Recipe::kFp8Block:
      return QuantizedOperand(
          q::QuantizeBlock(x, rows, cols, role == OperandRole::kWeight ? 128 : 1));
    case Recipe::kMxfp8:
      return QuantizedOperand(q::QuantizeMxfp8(x, rows, cols));
    case Recipe::kNvfp4:
      return QuantizedOperand(q::QuantizeNvfp4(x, rows, cols));
    case Recipe::kFp8Rowwise:
      // E4M3 for every role (torchao's row-wise recipe), one scale per row along K.
      return QuantizedOperand(q::QuantizeRowwise(x, rows, cols, q::Fp8Format::kE4M3));
    case Recipe::kInt8Rowwise:
      // Per token of the activation, per output channel of the weight (I2).
      return QuantizedOperand(q::QuantizeInt8Rowwise(x, rows, cols));
    case Recipe::kW8a16:
      if (role == OperandRole::kWeight) return QuantizedOperand(q::QuantizeW8(x, rows, cols));
      break;
    case Recipe::kW4a16:
      if (role == OperandRole::kWeight) {
        return QuantizedOperand(q::QuantizeW4(x, rows, cols, w4_group));
      }
      break;
  }
  return QuantizedOperand(std::vector<float>(x.begin(), x.end()));
}

std::vector<float> QuantizedOperand::Dequantize() const {
  struct Visitor {
    std::vector<float> operator()(const std::vector<float>& v) const { return v; }
    std::vector<float> operator()(const Fp8Tensor& t) const { return q::Dequantize(t.q, t.format); }
    std::vector<float> operator()(const q::BlockScaled& b) const { return q::Dequantize(b); }
    std::vector<float> operator()(const q::MxScaled& b) const { return q::Dequantize(b); }
    std::vector<float> operator()(const q::Nvfp4Scaled& b) const { return q::Dequantize(b); }
    std::vector<float> operator()(const q::RowScaled& b) const {
      return q::Dequantize(b, q::Fp8Format::kE4M3);
    }
    std::vector<float> operator()(const q::Int8RowScaled& b) const { return q::Dequantize(b); }
    std::vector<float> operator()(const q::Int8ChannelScaled& b) const { return q::Dequantize(b); }
    std::vector<float> operator()(const q::Int4GroupScaled& b) const { return q::Dequantize(b); }
  };
  return std::visit(Visitor{}, value_);
}

double QuantizedOperand::Bytes() const {
  struct Visitor {
    double operator()(const std::vector<float>& v) const { return 2.0 * v.size(); }
    double operator()(const Fp8Tensor& t) const { return t.q.data.size() + 4.0; }
    double operator()(const q::BlockScaled& b) const {
      return b.data.size() + 4.0 * b.scale_inv.size();
    }
    double operator()(const q::MxScaled& b) const {
      return static_cast<double>(b.data.size() + b.scales.size());
    }
    double operator()(const q::Nvfp4Scaled& b) const {
      return b.data.size() + b.scales.size() + 4.0;
    }
    double operator()(const q::RowScaled& b) const {
      return b.data.size() + 4.0 * b.scale_inv.size();
    }
    double operator()(const q::Int8RowScaled& b) const {
      return b.data.size() + 4.0 * b.scale_inv.size();
    }
    double operator()(const q::Int8ChannelScaled& b) const {
      return b.data.size() + 2.0 * b.scales.size();
    }
    double operator()(const q::Int4GroupScaled& b) const {
      return b.packed.size() + 2.0 * b.scales.size();
    }
  };
  return std::visit(Visitor{}, value_);
}

absl::StatusOr<HostGemmResult> HostReferenceGemm(Recipe recipe, core::Pass pass,
                                                 const HostOperands& ops, core::AmaxAlgo amax_algo,
                                                 int threads) {
  RETURN_IF_ERROR(CheckOperands(recipe, ops));
  const int64_t a_size = ops.m * ops.k, b_size = ops.n * ops.k, c_size = ops.m * ops.n;
  const size_t hist = ops.a_amax_history.size() / ops.groups;
  HostGemmResult result;
  result.out.resize(ops.groups * c_size);
  result.reference.resize(ops.groups * c_size);
  for (int64_t g = 0; g < ops.groups; ++g) {
    // An expert's rows past its tokens stay zero in both (see HostOperands::rows).
    const int64_t rows = ops.RowsOf(g);
    if (rows == 0) continue;
    const std::span<const float> a(ops.a.data() + g * a_size, rows * ops.k);
    const std::span<const float> b(ops.b.data() + g * b_size, b_size);
    const std::span<const float> a_hist(ops.a_amax_history.data() + g * hist, hist);
    const std::span<const float> b_hist(ops.b_amax_history.data() + g * hist, hist);
    const QuantizedOperand qa = QuantizedOperand::Quantize(recipe, RoleOfA(pass), a, rows, ops.k,
                                                           a_hist, amax_algo, ops.w4_group);
    const QuantizedOperand qb = QuantizedOperand::Quantize(recipe, RoleOfB(pass), b, ops.n, ops.k,
                                                           b_hist, amax_algo, ops.w4_group);
    if (qa.Int8Rows() != nullptr && qb.Int8Rows() != nullptr) {
      // int8-rowwise: the INT32 GEMM and its scale epilogue (I2), not a dequantized one.
      const std::vector<float> c = q::Int8RowwiseGemm(*qa.Int8Rows(), *qb.Int8Rows());
      std::copy(c.begin(), c.end(), result.out.begin() + g * c_size);
    } else {
      GemmParallel<float>(qa.Dequantize(), qb.Dequantize(), rows, ops.k, ops.n,
                          result.out.data() + g * c_size, threads);
    }
    GemmParallel<double>(a, b, rows, ops.k, ops.n, result.reference.data() + g * c_size, threads);
  }
  double num = 0, den = 0;
  for (size_t i = 0; i < result.out.size(); ++i) {
    const double d = result.out[i] - result.reference[i];
    num += d * d;
    den += result.reference[i] * result.reference[i];
  }
  result.rel_error = den > 0 ? std::sqrt(num / den) : (num > 0 ? INFINITY : 0.0);
  return result;
}

absl::StatusOr<HostGemmResult> HostReferenceGemm(Recipe recipe, core::Pass pass,
                                                 std::span<const float> a, std::span<const float> b,
                                                 int64_t m, int64_t k, int64_t n,
                                                 const core::TimingOptions& timing, int threads) {
  const int32_t history_len = recipe == Recipe::kFp8Delayed
                                  ? std::clamp(timing.amax_history_len, 0, kMaxHostAmaxHistory)
                                  : 0;
  HostOperands ops;
  if (history_len > 0 && m > 0 && k > 0 && n > 0) {
    ops = MakeHostOperands({m, k, n}, 1, timing.seed, history_len);
  }
  ops.m = m;
  ops.k = k;
  ops.n = n;
  ops.groups = 1;
  ops.a.assign(a.begin(), a.end());
  ops.b.assign(b.begin(), b.end());
  ops.w4_group = timing.w4_group;
  return HostReferenceGemm(recipe, pass, ops, timing.amax_algo, threads);
}

}  // namespace gemmprof::device
