// The serving recipes on the device (int8-rowwise, w8a16, w4a16 with groups of 128 and
// 64): fprop items at decode and prefill sizes verify against the fp32 reference of what
// the GEMM reads, name the kernel they kept (CUTLASS, or w4a16's decode kernel) and every
// form's time; the weight is never timed, int8-rowwise's activation is in autocast and
// dynamic; a dgrad is refused with the reason; shapes the kernels cannot take are refused
// naming the limit. And each form on its own (the per-item choice verifies only the form
// it keeps): every int8-rowwise and weight-only schedule, w4a16's decode kernel among
// them, run several times in a row (the stream-K forms' and the decode kernel's
// workspaces must serve launch after launch), against a host GEMM in double of the host
// quantizers' output (core/quant/integer_quant.h). Fails without a GPU.
#include <cuda_bf16.h>

#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "core/quant/integer_quant.h"
#include "core/quant/quant.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels/cuda/cuda_handles.h"
#include "kernels/cuda/w4a16_decode.h"
#include "kernels/cutlass/cutlass_gemm.h"
#include "kernels/quant/quantize.h"
#include "kernels/runner/cuda_runner_factory.h"
#include "tests/gpu/gpu_test_util.h"

namespace gemmprof::kernels {
namespace {

using core::Mode;
using core::Pass;
using core::Recipe;
using ::testing::HasSubstr;

class ServingTest : public testing::RunnerSuite {
 protected:
  static core::TimingOptions FastTiming(int32_t w4_group = 128) {
    core::TimingOptions t = RunnerSuite::FastTiming();
    t.w4_group = w4_group;
    return t;
  }
  static core::WorkItem Item(core::GemmShape shape, Recipe recipe, Mode mode,
                             Pass pass = Pass::kFprop) {
    core::WorkItem w;
    w.id = 5;
    w.op.name = "test";
    w.op.pass = pass;
    w.op.shape = shape;
    w.recipe = recipe;
    w.mode = mode;
    return w;
  }
};

TEST_F(ServingTest, FpropItemsVerifyAndNameTheirKernel) {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);  // a line per item, even if a later one hangs
  ASSERT_EQ(runner_->Info().sm, 90) << "the serving recipes' kernels are sm_90a";
  struct Case {
    Recipe recipe;
    int32_t group;
  };
  for (Case c : {Case{Recipe::kInt8Rowwise, 128}, Case{Recipe::kW8a16, 128},
                 Case{Recipe::kW4a16, 128}, Case{Recipe::kW4a16, 64}}) {
    ASSERT_TRUE(runner_->Supports(c.recipe).supported) << runner_->Supports(c.recipe).reason;
    for (core::GemmShape shape : {core::GemmShape{16, 4096, 1024}, core::GemmShape{128, 1024, 2048},
                                  core::GemmShape{1000, 512, 768}}) {
      for (Mode mode : {Mode::kPrequant, Mode::kAutocast, Mode::kDynamic}) {
        SCOPED_TRACE(std::string(core::ToString(c.recipe)) + " group " + std::to_string(c.group) +
                     " " + shape.ToString() + " " + std::string(core::ToString(mode)));
        auto m = device::MeasureOne(*runner_, Item(shape, c.recipe, mode), FastTiming(c.group));
        ASSERT_TRUE(m.ok()) << m.status();
        EXPECT_EQ(m->verification, core::Verification::kPassed)
            << "rel_error " << m->rel_error << " threshold " << m->error_threshold << " "
            << m->notes;
        // w4a16 at decode sizes may keep the project's decode kernel.
        EXPECT_THAT(m->algorithm, ::testing::AnyOf(HasSubstr("CUTLASS"),
                                                   HasSubstr("gemmprof sm90 w4a16 decode GEMM")));
        EXPECT_THAT(m->notes, HasSubstr("Kernel form chosen by measurement"));
        const bool activation_timed = c.recipe == Recipe::kInt8Rowwise && mode != Mode::kPrequant;
        if (activation_timed) {
          EXPECT_GT(m->quant_ms, 0);
          // A BF16 read and an INT8 write per activation element, an fp32 scale per
          // token; the weight never.
          EXPECT_DOUBLE_EQ(m->quant_bytes, 3.0 * shape.m * shape.k + 4.0 * shape.m);
        } else {
          EXPECT_EQ(m->quant_ms, 0);
          EXPECT_EQ(m->quant_bytes, 0);
        }
        std::printf("%-12s g%-3d %-8s %-15s rel_error %.3e median %.4f ms quant %.4f ms  %s\n",
                    std::string(core::ToString(c.recipe)).c_str(), c.group,
                    std::string(core::ToString(mode)).c_str(), shape.ToString().c_str(),
                    m->rel_error, m->time.median_ms, m->quant_ms, m->algorithm.c_str());
      }
    }
  }
}

TEST_F(ServingTest, DgradIsRefusedWithTheReason) {
  auto m = device::MeasureOne(
      *runner_, Item({128, 1024, 1024}, Recipe::kW4a16, Mode::kPrequant, Pass::kDgrad),
      FastTiming());
  ASSERT_FALSE(m.ok());
  EXPECT_THAT(std::string(m.status().message()), HasSubstr("fprop only"));
}

TEST_F(ServingTest, ShapesTheKernelsCannotTakeAreRefusedNamingTheLimit) {
  // K = 1040 passes the runner's K % 16 but is no multiple of the mixed-input GEMM's
  // 64-wide K tile: every CUTLASS form refuses, and the item with the first one's reason.
  auto m = device::MeasureOne(*runner_, Item({16, 1040, 256}, Recipe::kW4a16, Mode::kPrequant),
                              FastTiming());
  ASSERT_FALSE(m.ok());
  EXPECT_TRUE(absl::IsFailedPrecondition(m.status())) << m.status();
  EXPECT_THAT(std::string(m.status().message()), HasSubstr("K = 1040"));
  // N = 100: the runner's own rule (N % 16, every recipe) names it first.
  m = device::MeasureOne(*runner_, Item({64, 256, 100}, Recipe::kInt8Rowwise, Mode::kPrequant),
                         FastTiming());
  ASSERT_FALSE(m.ok());
  EXPECT_TRUE(absl::IsFailedPrecondition(m.status())) << m.status();
  EXPECT_THAT(std::string(m.status().message()), HasSubstr("N=100"));
}

// BF16-representable random normal values (times `scale`) and their bits.
struct Bf16Tensor {
  std::vector<float> values;
  std::vector<uint16_t> bits;
};
Bf16Tensor RandomBf16(int64_t n, uint32_t seed, float scale) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, scale);
  Bf16Tensor t;
  for (int64_t i = 0; i < n; ++i) {
    t.bits.push_back(core::quant::FloatToBf16Bits(normal(rng)));
    t.values.push_back(core::quant::Bf16BitsToFloat(t.bits.back()));
  }
  return t;
}

// C = A * W^T in double.
std::vector<double> HostGemm(const std::vector<float>& a, const std::vector<float>& w, int64_t m,
                             int64_t n, int64_t k) {
  std::vector<double> c(m * n);
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      double sum = 0;
      for (int64_t kk = 0; kk < k; ++kk) sum += double{a[i * k + kk]} * double{w[j * k + kk]};
      c[i * n + j] = sum;
    }
  }
  return c;
}

// Relative Frobenius error of `got` against `ref` (a NaN anywhere makes it NaN).
double RelError(const std::vector<float>& got, const std::vector<double>& ref) {
  double num = 0, den = 0;
  for (size_t i = 0; i < ref.size(); ++i) {
    const double d = got[i] - ref[i];
    num += d * d;
    den += ref[i] * ref[i];
  }
  return std::sqrt(num / den);
}

template <typename T>
T* Put(std::vector<DeviceBuffer>& keep, const std::vector<T>& host) {
  auto b = DeviceBuffer::Create(host.size() * sizeof(T));
  EXPECT_TRUE(b.ok()) << b.status();
  if (!b.ok()) return nullptr;
  EXPECT_EQ(cudaMemcpy(b->get(), host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice),
            cudaSuccess);
  keep.push_back(*std::move(b));
  return keep.back().as<T>();
}

TEST_F(ServingTest, EveryCutlassFormMatchesTheHostGemmLaunchAfterLaunch) {
  namespace q = core::quant;
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  const int sm = runner_->Info().sm;
  ASSERT_EQ(sm, 90);
  // Decode (16 tokens; few 128-row tiles of N, where stream-K splits K, and the decode
  // kernel splits K 16 ways), a prefill size, and two decode sizes for the decode kernel:
  // 5 tokens with K whole per CTA (group 128) or in 2 splits (64), and 3 tokens over 22
  // warps' rows (a CTA with 6 of its 8 warps) with 13 groups in splits of 3, 3, 3, 3, 1
  // (group 128; the splits as W4a16Decode::Create picks them on a 132-SM H200).
  for (auto [m, n, k] : std::vector<std::tuple<int64_t, int64_t, int64_t>>{
           {16, 512, 4096}, {200, 1024, 1024}, {5, 2048, 256}, {3, 704, 1664}}) {
    const Bf16Tensor a = RandomBf16(m * k, 11, 1.0f), w = RandomBf16(n * k, 12, 0.02f);
    std::vector<DeviceBuffer> keep;
    auto* a_dev = reinterpret_cast<const __nv_bfloat16*>(Put(keep, a.bits));
    auto* w_dev = reinterpret_cast<const __nv_bfloat16*>(Put(keep, w.bits));
    auto c_buf = DeviceBuffer::Create(m * n * 2);
    ASSERT_TRUE(c_buf.ok() && a_dev && w_dev);
    auto* c = c_buf->as<__nv_bfloat16>();
    auto run = [&](const CutlassGemm& g, const std::vector<float>& a_ref,
                   const std::vector<float>& w_ref, const std::string& what) {
      SCOPED_TRACE(what + " " + std::to_string(m) + "x" + std::to_string(k) + "x" +
                   std::to_string(n) + ": " + g.Description());
      const std::vector<double> ref = HostGemm(a_ref, w_ref, m, n, k);
      std::printf("%-40s ...\n", what.c_str());
      // The decode kernel's cluster reduction adds the splits in a fixed order.
      const bool same_bits = g.Description().find("in a cluster") != std::string::npos;
      std::vector<uint16_t> first;
      for (int launch = 0; launch < 3; ++launch) {
        ASSERT_EQ(cudaMemset(c, 0xFF, m * n * 2), cudaSuccess);  // NaN until written
        ASSERT_TRUE(g.Enqueue(nullptr).ok());
        ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
        const double err = RelError(testing::Bf16ToHostFloat(c, m * n), ref);
        EXPECT_LT(err, 2e-2) << "launch " << launch;  // also fails for NaN
        if (launch == 0) std::printf("%-40s rel_error %.3e\n", what.c_str(), err);
        const std::vector<uint16_t> bits = testing::ToHost<uint16_t>(c, m * n);
        if (launch == 0) {
          first = bits;
        } else if (same_bits) {
          EXPECT_EQ(bits, first) << "launch " << launch << " differs from the first";
        }
      }
    };
    // int8-rowwise: both operands per row to INT8 on the device; the host's dequantized
    // operands are the reference (the kernel's sum is exact, its epilogue fp32).
    {
      auto qa = DeviceBuffer::Create(m * k), qw = DeviceBuffer::Create(n * k);
      auto sa = DeviceBuffer::Create(m * 4), sw = DeviceBuffer::Create(n * 4);
      ASSERT_TRUE(qa.ok() && qw.ok() && sa.ok() && sw.ok());
      ASSERT_EQ(Int8RowwiseQuantize(a_dev, m, k, qa->as<int8_t>(), sa->as<float>(), nullptr),
                cudaSuccess);
      ASSERT_EQ(Int8RowwiseQuantize(w_dev, n, k, qw->as<int8_t>(), sw->as<float>(), nullptr),
                cudaSuccess);
      const std::vector<float> a_ref = q::Dequantize(q::QuantizeInt8Rowwise(a.values, m, k));
      const std::vector<float> w_ref = q::Dequantize(q::QuantizeInt8Rowwise(w.values, n, k));
      RowwiseGemmSpec spec;
      spec.groups = {
          BlockGemmGroup{m, n, k, qa->get(), qw->get(), c, sa->as<float>(), sw->as<float>()}};
      for (Int8RowwiseSchedule schedule : kInt8RowwiseSchedules) {
        auto g = CutlassGemm::CreateInt8Rowwise(spec, schedule, 0, sm);
        ASSERT_TRUE(g.ok()) << g.status();
        run(*g, a_ref, w_ref, std::string("int8-rowwise ") + Int8RowwiseScheduleName(schedule));
      }
    }
    // Weight-only: the weight quantized on the device, the activation BF16 as it is.
    for (int64_t group : {int64_t{0}, int64_t{128}, int64_t{64}}) {  // 0: w8a16
      const bool int4 = group > 0;
      const int64_t groups = int4 ? (k + group - 1) / group : 1;
      auto qw = DeviceBuffer::Create(int4 ? n * k / 2 : n * k);
      auto sw = DeviceBuffer::Create(n * groups * 2);
      ASSERT_TRUE(qw.ok() && sw.ok());
      if (int4) {
        ASSERT_EQ(
            W4Quantize(w_dev, n, k, group, qw->as<uint8_t>(), sw->as<__nv_bfloat16>(), nullptr),
            cudaSuccess);
      } else {
        ASSERT_EQ(W8Quantize(w_dev, n, k, qw->as<int8_t>(), sw->as<__nv_bfloat16>(), nullptr),
                  cudaSuccess);
      }
      const std::vector<float> w_ref = int4 ? q::Dequantize(q::QuantizeW4(w.values, n, k, group))
                                            : q::Dequantize(q::QuantizeW8(w.values, n, k));
      WeightOnlyGemmSpec spec;
      spec.int4 = int4;
      spec.m = m;
      spec.n = n;
      spec.k = k;
      spec.a = a_dev;
      spec.w = qw->get();
      spec.scales = sw->as<__nv_bfloat16>();
      spec.group = int4 ? group : k;
      spec.c = c;
      if (int4) {
        auto reordered = CutlassGemm::ReorderW4(spec, 0, sm, nullptr);
        ASSERT_TRUE(reordered.ok()) << reordered.status();
        spec.w4_reordered = *std::move(reordered);
      }
      for (WeightOnlySchedule schedule : kWeightOnlySchedules) {
        auto g = CutlassGemm::CreateWeightOnly(spec, schedule, 0, sm);
        if (!IsCutlassSchedule(schedule) && (!int4 || m > W4a16Decode::kMaxTokens)) {
          EXPECT_TRUE(absl::IsFailedPrecondition(g.status())) << g.status();
          continue;
        }
        ASSERT_TRUE(g.ok()) << g.status();
        run(*g, a.values, w_ref,
            std::string(int4 ? "w4a16 g" + std::to_string(group) : "w8a16") + " " +
                WeightOnlyScheduleName(schedule));
      }
    }
  }
}

// Every form at Llama-3.1-8B's decode and prefill sizes, 30 launches in a row each (what an
// item's rounds do), timed: a form that stalls or slows launch after launch shows here.
TEST_F(ServingTest, EveryFormRunsLaunchAfterLaunchAtLlamaSizes) {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  const int sm = runner_->Info().sm;
  ASSERT_EQ(sm, 90);
  for (auto [m, n, k] : std::vector<std::tuple<int64_t, int64_t, int64_t>>{
           {16, 4096, 14336}, {128, 28672, 4096}, {8192, 4096, 4096}}) {
    std::vector<DeviceBuffer> keep;
    auto buf = [&](int64_t bytes) {
      auto b = DeviceBuffer::Create(bytes);
      EXPECT_TRUE(b.ok());
      EXPECT_EQ(cudaMemset(b->get(), 0, bytes), cudaSuccess);
      keep.push_back(*std::move(b));
      return keep.back().get();
    };
    void* a = buf(m * k * 2);
    void* w = buf(n * k);
    void* scales = buf(n * (k / 64) * 2);
    void* c = buf(m * n * 2);
    void* sa = buf(m * 4);
    void* sw = buf(n * 4);
    cudaEvent_t start, stop;
    ASSERT_EQ(cudaEventCreate(&start), cudaSuccess);
    ASSERT_EQ(cudaEventCreate(&stop), cudaSuccess);
    auto time = [&](const CutlassGemm& g, const std::string& what) {
      std::printf("%lldx%lldx%lld %-36s ...", static_cast<long long>(m), static_cast<long long>(k),
                  static_cast<long long>(n), what.c_str());
      std::fflush(stdout);
      ASSERT_TRUE(g.Enqueue(nullptr).ok());
      ASSERT_EQ(cudaEventRecord(start), cudaSuccess);
      for (int i = 0; i < 30; ++i) ASSERT_TRUE(g.Enqueue(nullptr).ok());
      ASSERT_EQ(cudaEventRecord(stop), cudaSuccess);
      ASSERT_EQ(cudaEventSynchronize(stop), cudaSuccess);
      float ms = 0;
      ASSERT_EQ(cudaEventElapsedTime(&ms, start, stop), cudaSuccess);
      std::printf(" %.4f ms per launch\n", ms / 30);
    };
    RowwiseGemmSpec i8;
    i8.groups = {BlockGemmGroup{m, n, k, a, w, static_cast<__nv_bfloat16*>(c),
                                static_cast<float*>(sa), static_cast<float*>(sw)}};
    for (Int8RowwiseSchedule schedule : kInt8RowwiseSchedules) {
      auto g = CutlassGemm::CreateInt8Rowwise(i8, schedule, 0, sm);
      ASSERT_TRUE(g.ok()) << g.status();
      time(*g, std::string("int8-rowwise ") + Int8RowwiseScheduleName(schedule));
    }
    for (bool int4 : {false, true}) {
      WeightOnlyGemmSpec spec;
      spec.int4 = int4;
      spec.m = m;
      spec.n = n;
      spec.k = k;
      spec.a = static_cast<const __nv_bfloat16*>(a);
      spec.w = w;
      spec.scales = static_cast<const __nv_bfloat16*>(scales);
      spec.group = int4 ? 128 : k;
      spec.c = static_cast<__nv_bfloat16*>(c);
      if (int4) {
        auto reordered = CutlassGemm::ReorderW4(spec, 0, sm, nullptr);
        ASSERT_TRUE(reordered.ok()) << reordered.status();
        spec.w4_reordered = *std::move(reordered);
      }
      for (WeightOnlySchedule schedule : kWeightOnlySchedules) {
        auto g = CutlassGemm::CreateWeightOnly(spec, schedule, 0, sm);
        if (!IsCutlassSchedule(schedule) && (!int4 || m > W4a16Decode::kMaxTokens)) {
          EXPECT_TRUE(absl::IsFailedPrecondition(g.status())) << g.status();
          continue;
        }
        ASSERT_TRUE(g.ok()) << g.status();
        time(*g, std::string(int4 ? "w4a16 " : "w8a16 ") + WeightOnlyScheduleName(schedule));
      }
    }
    (void)cudaEventDestroy(start);
    (void)cudaEventDestroy(stop);
  }
}

}  // namespace
}  // namespace gemmprof::kernels
