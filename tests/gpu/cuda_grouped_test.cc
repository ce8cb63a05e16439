// Grouped GEMMs (MoE experts, core::GemmOp::groups) in the CUDA runner: one
// strided-batched cuBLASLt call for bf16, fp8-current and fp8-delayed (groups 1, 4, 8
// pass verification; flops and bytes count every group; 8 underfilling groups take far
// less than 8x one group), Unimplemented for the microscaled recipes, memory checks
// that count groups, and a numerical cross-check of the grouped building blocks against
// the host (device/host_gemm.h and core/quant). fp8-block's grouped GEMMs
// are tested in cuda_grouped_block_test.cc. Fails without a GPU.
#include <cuda_bf16.h>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <span>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "core/quant/quant.h"
#include "device/host/host_gemm.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels/cublaslt/cublaslt_handles.h"
#include "kernels/cublaslt/matmul_plan.h"
#include "kernels/cuda/cuda_handles.h"
#include "kernels/cuda/device_kernels.h"
#include "kernels/cuda/device_pool.h"
#include "kernels/quant/operand_quantizer.h"
#include "kernels/runner/cuda_runner_factory.h"
#include "kernels/runner/recipe_rules.h"
#include "tests/gpu/gpu_test_util.h"

namespace gemmprof::kernels {
namespace {

using core::Mode;
using core::Pass;
using core::Recipe;
using ::testing::HasSubstr;
namespace quant = core::quant;

std::string Name(Recipe r) { return std::string(core::ToString(r)); }
std::string Name(Pass p) { return std::string(core::ToString(p)); }

// ---------------------------------------------------------------------------------------
// Through the runner (device::Runner), as the queue calls it.

class GroupedRunnerTest : public testing::RunnerSuite {
 protected:
  static core::TimingOptions FastTiming() {
    core::TimingOptions t = RunnerSuite::FastTiming();
    t.amax_history_len = 16;
    return t;
  }
  static core::WorkItem Item(core::GemmShape shape, int64_t groups, Pass pass, Recipe recipe,
                             Mode mode) {
    core::WorkItem w;
    w.id = 11;
    w.op.name = "expert_up";
    w.op.pass = pass;
    w.op.shape = shape;
    w.op.groups = groups;
    w.recipe = recipe;
    w.mode = mode;
    return w;
  }
};

// recipe x pass x {0 prequant, 1 training-step autocast, 2 per-gemm autocast}.
using GroupedCase = std::tuple<Recipe, Pass, int>;

class GroupedRecipeTest : public GroupedRunnerTest,
                          public ::testing::WithParamInterface<GroupedCase> {};

TEST_P(GroupedRecipeTest, OneFourAndEightGroupsVerifyAndCountEveryGroup) {
  const auto [recipe, pass, mode_index] = GetParam();
  const core::GemmShape shape{256, 384, 144};
  core::TimingOptions t = FastTiming();
  t.accounting = mode_index == 2 ? core::Accounting::kPerGemm : core::Accounting::kTrainingStep;
  const Mode mode = mode_index == 0 ? Mode::kPrequant : Mode::kAutocast;
  double bytes_one_group = 0;
  for (int64_t groups : {1, 4, 8}) {
    SCOPED_TRACE(::testing::Message() << "groups " << groups);
    const core::WorkItem item = Item(shape, groups, pass, recipe, mode);
    ASSERT_TRUE(device::CanImplementOne(*runner_, item, t).ok());
    auto m = device::MeasureOne(*runner_, item, t);
    ASSERT_TRUE(m.ok()) << m.status();
    EXPECT_EQ(m->verification, core::Verification::kPassed)
        << "rel_error " << m->rel_error << " threshold " << m->error_threshold << " " << m->notes;
    EXPECT_DOUBLE_EQ(m->flops, static_cast<double>(groups) * 2.0 * shape.m * shape.k * shape.n);
    EXPECT_DOUBLE_EQ(m->flops, item.op.Flops());
    EXPECT_EQ(m->time.count, t.timed_iters);
    EXPECT_GT(m->time.median_ms, 0);
    // Per-tensor recipes and bf16 move exactly groups x the bytes of one group.
    if (groups == 1) {
      bytes_one_group = m->bytes;
      EXPECT_THAT(m->notes, ::testing::Not(HasSubstr("grouped")));
    } else {
      EXPECT_DOUBLE_EQ(m->bytes, groups * bytes_one_group);
      EXPECT_THAT(m->notes, HasSubstr("strided-batched"));
      if (recipe != Recipe::kBf16) {
        EXPECT_THAT(m->notes, HasSubstr(absl::StrCat("grouped: one per-tensor scale across the ",
                                                     groups, " groups")));
      }
    }
    std::printf("%-11s %-5s %-13s %s x%-2d rel_error %.3e median %.4f ms quant %.4f ms\n",
                Name(recipe).c_str(), Name(pass).c_str(),
                mode_index == 0 ? "prequant" : (mode_index == 1 ? "training-step" : "per-gemm"),
                shape.ToString().c_str(), static_cast<int>(groups), m->rel_error, m->time.median_ms,
                m->quant_ms);
  }
}

INSTANTIATE_TEST_SUITE_P(
    PerTensorAndBf16, GroupedRecipeTest,
    ::testing::Combine(::testing::Values(Recipe::kBf16, Recipe::kFp8Current, Recipe::kFp8Delayed),
                       ::testing::Values(Pass::kFprop, Pass::kDgrad, Pass::kWgrad),
                       ::testing::Values(0, 1, 2)));

// One group of 128x1024x1024 is 8 output tiles of 128x128: a small fraction of the SMs.
// Eight groups in one call fill more of them, so they take far less than 8x one group.
// Routed experts at uneven tokens (core::GemmOp::group_tokens), both layouts, every
// recipe with a grouped form, every pass: each item verifies against the fp32 reference
// over the whole capacity (the experts' padding is zeros, so a launch that skips it and
// one that computes it must both match), flops count each expert at its own tokens, and
// the notes say the counts and whether the launch followed them. Experts: 96, 0, 17,
// 128, 3, 64 tokens (capacity 128; wgrad pads each to 16).
TEST_F(GroupedRunnerTest, RoutedExpertsVerifyInBothLayoutsForEveryGroupedRecipe) {
  const std::vector<int64_t> tokens = {96, 0, 17, 128, 3, 64};
  core::TimingOptions t = FastTiming();
  for (core::MoeLayout layout : {core::MoeLayout::kContiguous, core::MoeLayout::kMasked}) {
    for (Pass pass : {Pass::kFprop, Pass::kDgrad, Pass::kWgrad}) {
      for (Recipe recipe :
           {Recipe::kBf16, Recipe::kFp8Current, Recipe::kFp8Block, Recipe::kFp8Rowwise}) {
        // fprop (M, K, N) = (capacity, 512, 256); dgrad swaps K and N; wgrad (K, M, N).
        core::GemmShape shape = pass == Pass::kFprop   ? core::GemmShape{128, 512, 256}
                                : pass == Pass::kDgrad ? core::GemmShape{128, 256, 512}
                                                       : core::GemmShape{512, 128, 256};
        core::WorkItem item = Item(shape, 6, pass, recipe, Mode::kPrequant);
        item.op.group_tokens = tokens;
        if (pass == Pass::kWgrad) {
          for (int64_t& n : item.op.group_tokens) n = (n + 15) / 16 * 16;
        }
        item.op.layout = layout;
        SCOPED_TRACE(
            absl::StrCat(Name(recipe), " ", Name(pass), " ", std::string(core::ToString(layout))));
        auto m = device::MeasureOne(*runner_, item, t);
        ASSERT_TRUE(m.ok()) << m.status();
        EXPECT_EQ(m->verification, core::Verification::kPassed)
            << "rel_error " << m->rel_error << " " << m->notes;
        EXPECT_DOUBLE_EQ(m->flops, item.op.Flops());
        EXPECT_LT(m->flops, 6.0 * shape.Flops());
        EXPECT_THAT(m->notes, HasSubstr("experts: "));
        EXPECT_THAT(m->notes, HasSubstr("per expert min 0 / "));
        // Contiguous fprop/dgrad follow the counts whatever the library; masked cuBLASLt
        // runs the capacity (CUTLASS's grouped form, if kept, follows them).
        if (layout == core::MoeLayout::kContiguous && pass != Pass::kWgrad) {
          EXPECT_THAT(m->notes, HasSubstr("the launch follows each expert's tokens"));
        }
        std::printf("routed %s %s %s: %s; rel_error %.2e\n", Name(recipe).c_str(),
                    Name(pass).c_str(), std::string(core::ToString(layout)).c_str(),
                    m->algorithm.c_str(), m->rel_error);
      }
    }
  }
}

TEST_F(GroupedRunnerTest, EightUnderfillingGroupsTakeFarLessThanEightTimesOne) {
  core::TimingOptions t = FastTiming();
  t.warmup_iters = 10;
  t.timed_iters = 50;
  const core::GemmShape shape{128, 1024, 1024};
  for (Recipe recipe : {Recipe::kBf16, Recipe::kFp8Current, Recipe::kFp8Delayed}) {
    for (Mode mode : {Mode::kPrequant, Mode::kAutocast}) {
      auto one = device::MeasureOne(*runner_, Item(shape, 1, Pass::kFprop, recipe, mode), t);
      auto eight = device::MeasureOne(*runner_, Item(shape, 8, Pass::kFprop, recipe, mode), t);
      ASSERT_TRUE(one.ok()) << one.status();
      ASSERT_TRUE(eight.ok()) << eight.status();
      EXPECT_EQ(eight->verification, core::Verification::kPassed) << eight->rel_error;
      const double ratio = eight->time.median_ms / one->time.median_ms;
      std::printf(
          "%-11s %-8s %s: 1 group %.4f ms, 8 groups %.4f ms (%.2fx; %.1f vs %.1f TFLOP/s)\n",
          Name(recipe).c_str(), std::string(core::ToString(mode)).c_str(), shape.ToString().c_str(),
          one->time.median_ms, eight->time.median_ms, ratio,
          one->flops / one->time.median_ms * 1e-9, eight->flops / eight->time.median_ms * 1e-9);
      // The GEMM alone (prequant) is the grouped call; autocast adds the per-group
      // transposing casts, which are not batched, so only the GEMM gets the tight bound.
      EXPECT_LT(ratio, mode == Mode::kPrequant ? 4.0 : 8.0)
          << Name(recipe) << " " << core::ToString(mode);
    }
  }
}

// fp8-block takes groups (cuda_grouped_block_test.cc); the microscaled recipes do not.
TEST_F(GroupedRunnerTest, MicroscaledGroupsAreUnimplemented) {
  const core::TimingOptions t = FastTiming();
  const core::GemmShape shape{256, 256, 256};
  for (Recipe r : {Recipe::kMxfp8, Recipe::kNvfp4}) {
    const core::WorkItem item = Item(shape, 8, Pass::kFprop, r, Mode::kAutocast);
    absl::Status st = CheckGroups(item);
    EXPECT_EQ(st.code(), absl::StatusCode::kUnimplemented) << st;
    EXPECT_EQ(st.message(), absl::StrCat(Name(r),
                                         ": grouped GEMMs (groups = 8) are not implemented in the "
                                         "CUDA runner"));
    // The runner's answer: the recipe's support first (sm_100+), then the groups.
    absl::Status fits = device::CanImplementOne(*runner_, item, t);
    EXPECT_TRUE(fits.code() == absl::StatusCode::kUnimplemented ||
                fits.code() == absl::StatusCode::kFailedPrecondition)
        << fits;
    // Refused before any device work: not supported on this chip (Hopper) or not
    // implemented (Blackwell), both of which the queue reports as not_supported.
    auto m = device::MeasureOne(*runner_, item, t);
    EXPECT_TRUE(m.status().code() == absl::StatusCode::kUnimplemented ||
                m.status().code() == absl::StatusCode::kFailedPrecondition)
        << m.status();
    const core::WorkItem dgrad = Item(shape, 4, Pass::kDgrad, r, Mode::kPrequant);
    absl::Status s = CheckGroups(dgrad);
    EXPECT_EQ(s.code(), absl::StatusCode::kUnimplemented) << s;
    EXPECT_THAT(std::string(s.message()), HasSubstr("grouped GEMMs (groups = 4)"));
    // Asked of the runner, a chip without the recipe says so before the groups.
    const core::RecipeSupport support = runner_->Supports(r);
    absl::Status asked = device::CanImplementOne(*runner_, dgrad, t);
    if (support.supported) {
      EXPECT_EQ(asked, s);
    } else {
      EXPECT_EQ(asked, absl::FailedPreconditionError(support.reason));
    }
  }
  EXPECT_TRUE(device::CanImplementOne(
                  *runner_, Item(shape, 8, Pass::kFprop, Recipe::kFp8Block, Mode::kAutocast), t)
                  .ok());
}

TEST_F(GroupedRunnerTest, BadGroupsAndMemoryCountEveryGroup) {
  const core::TimingOptions t = FastTiming();
  absl::Status zero = device::CanImplementOne(
      *runner_, Item({256, 256, 256}, 0, Pass::kFprop, Recipe::kBf16, Mode::kAutocast), t);
  EXPECT_EQ(zero.code(), absl::StatusCode::kInvalidArgument) << zero;
  EXPECT_THAT(std::string(zero.message()), HasSubstr("groups = 0"));
  // 1.5 GiB of BF16 operands per group: one group fits, 1000 groups never do.
  const core::GemmShape shape{16384, 16384, 16384};
  EXPECT_TRUE(device::CanImplementOne(
                  *runner_, Item(shape, 1, Pass::kFprop, Recipe::kBf16, Mode::kAutocast), t)
                  .ok());
  absl::Status big = device::CanImplementOne(
      *runner_, Item(shape, 1000, Pass::kFprop, Recipe::kFp8Current, Mode::kAutocast), t);
  EXPECT_EQ(big.code(), absl::StatusCode::kResourceExhausted) << big;
  EXPECT_THAT(std::string(big.message()), HasSubstr("16384x16384x16384 x 1000 groups"));
}

// ---------------------------------------------------------------------------------------
// The grouped building blocks against the host.

using testing::Bf16ToHostFloat;
using testing::RelError;
using testing::ToHost;

class GroupedCrossCheckTest
    : public testing::LtSuite<::testing::TestWithParam<std::tuple<Recipe, Pass>>> {
 protected:
  static constexpr int64_t kGroups = 4;

  // The grouped GEMM of qa and qb into c, one strided-batched call.
  void RunGroupedGemm(const core::WorkItem& item, const OperandQuantizer& qa,
                      const OperandQuantizer& qb, __nv_bfloat16* c) {
    const core::GemmShape& s = item.op.shape;
    MatmulSpec spec;
    spec.m = s.m;
    spec.n = s.n;
    spec.k = s.k;
    spec.batch = item.op.groups;
    spec.a_type = qa.data_type();
    spec.bt_type = qb.data_type();
    spec.a = qa.data();
    spec.bt = qb.data();
    spec.c = c;
    spec.a_scale_mode = qa.scale_mode();
    spec.bt_scale_mode = qb.scale_mode();
    spec.a_scale = qa.gemm_scale();
    spec.bt_scale = qb.gemm_scale();
    std::string note;
    spec.fast_accum = ResolveFastAccum(item, core::FastAccum::kDefault, &note);
    fast_accum_ = spec.fast_accum.value_or(false);
    spec.workspace = workspace_.get();
    spec.workspace_bytes = workspace_.bytes();
    auto plan = MatmulPlan::Create(lt_.get(), spec, 1);
    ASSERT_TRUE(plan.ok()) << plan.status();
    ASSERT_TRUE(plan->Enqueue(stream_.get()).ok());
  }

  DevicePool pool_;
  bool fast_accum_ = false;
};

// bf16: the device's grouped GEMM against the host reference runner's grouped GEMM
// (HostReferenceGemm with groups) of the very same BF16 operands.
TEST(GroupedHostReferenceTest, Bf16GroupedGemmMatchesHostReferenceGemm) {
  ASSERT_GT(CudaDeviceCount(), 0) << "gpu tests need a CUDA device";
  ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
  auto stream = CudaStream::Create();
  auto lt = LtHandle::Create();
  auto ws = DeviceBuffer::Create(size_t{32} << 20);
  ASSERT_TRUE(stream.ok() && lt.ok() && ws.ok());
  DevicePool pool;
  const int64_t g = 4, m = 72, k = 256, n = 40;
  const cudaStream_t st = stream->get();
  auto a = pool.GetAs<__nv_bfloat16>("a", g * m * k);
  auto b = pool.GetAs<__nv_bfloat16>("b", g * n * k);
  auto c = pool.GetAs<__nv_bfloat16>("c", g * m * n);
  ASSERT_TRUE(a.ok() && b.ok() && c.ok());
  ASSERT_EQ(FillRandomNormalBf16(*a, g * m * k, 3, 1, st), cudaSuccess);
  ASSERT_EQ(FillRandomNormalBf16(*b, g * n * k, 3, 2, st), cudaSuccess);
  MatmulSpec spec;
  spec.m = m;
  spec.n = n;
  spec.k = k;
  spec.batch = g;
  spec.a = *a;
  spec.bt = *b;
  spec.c = *c;
  spec.workspace = ws->get();
  spec.workspace_bytes = ws->bytes();
  auto plan = MatmulPlan::Create(lt->get(), spec, 1);
  ASSERT_TRUE(plan.ok()) << plan.status();
  ASSERT_TRUE(plan->Enqueue(st).ok());
  ASSERT_EQ(cudaStreamSynchronize(st), cudaSuccess);

  device::HostOperands ops;
  ops.m = m;
  ops.k = k;
  ops.n = n;
  ops.groups = g;
  ops.a = Bf16ToHostFloat(*a, g * m * k);
  ops.b = Bf16ToHostFloat(*b, g * n * k);
  auto host = device::HostReferenceGemm(Recipe::kBf16, Pass::kFprop, ops, core::AmaxAlgo::kMax);
  ASSERT_TRUE(host.ok()) << host.status();
  const std::vector<float> out = Bf16ToHostFloat(*c, g * m * n);
  const double err = RelError(out, host->reference);
  EXPECT_LE(err, ErrorThreshold(Recipe::kBf16, false));
  // Every group individually, so a wrong batch offset cannot hide behind the others.
  for (int64_t i = 0; i < g; ++i) {
    const std::vector<float> og(out.begin() + i * m * n, out.begin() + (i + 1) * m * n);
    const std::vector<double> rg(host->reference.begin() + i * m * n,
                                 host->reference.begin() + (i + 1) * m * n);
    EXPECT_LE(RelError(og, rg), ErrorThreshold(Recipe::kBf16, false)) << "group " << i;
  }
  std::printf("grouped bf16 %ldx%ldx%ld x%ld: rel_error vs host reference %.3e\n", m, k, n, g, err);
}

// Per-tensor FP8, grouped, with the transposed copies of a training step: the device's
// quantization equals the host's quantization of all groups as ONE tensor (one scale),
// each group's transposed copy is that group's transpose byte for byte, and the grouped
// GEMM matches a host fp32 GEMM of the dequantized operands group by group.
TEST_P(GroupedCrossCheckTest, GroupedQuantizationAndGemmMatchTheHost) {
  const auto [recipe, pass] = GetParam();
  core::WorkItem item;
  item.op.pass = pass;
  item.op.shape = {200, 384, 144};
  item.op.groups = kGroups;
  item.recipe = recipe;
  core::TimingOptions timing;
  // Delayed: a one-entry history makes the second Enqueue's scale the first Enqueue's
  // fused amax, i.e. the max over the groups' amaxes (MaxOf), which the host checks.
  timing.amax_history_len = 1;
  const core::GemmShape& s = item.op.shape;
  const int64_t a_n = kGroups * s.m * s.k, b_n = kGroups * s.n * s.k;
  const cudaStream_t st = stream_.get();
  auto a_src = pool_.GetAs<__nv_bfloat16>("a.src", a_n);
  auto bt_src = pool_.GetAs<__nv_bfloat16>("bt.src", b_n);
  auto c = pool_.GetAs<__nv_bfloat16>("c", kGroups * s.m * s.n);
  ASSERT_TRUE(a_src.ok() && bt_src.ok() && c.ok());
  ASSERT_EQ(FillRandomNormalBf16(*a_src, a_n, 5, 1, st), cudaSuccess);
  ASSERT_EQ(FillRandomNormalBf16(*bt_src, b_n, 5, 2, st), cudaSuccess);
  const OperandConfig ca = OperandA(item, timing), cb = OperandBt(item, timing);
  ASSERT_EQ(ca.groups, kGroups);
  auto qa = OperandQuantizer::Create(pool_, ca, *a_src, true);
  auto qb = OperandQuantizer::Create(pool_, cb, *bt_src, true);
  ASSERT_TRUE(qa.ok() && qb.ok());
  ASSERT_TRUE(qa->SeedHistory(st).ok() && qb->SeedHistory(st).ok());
  // New data with the largest value in group 0 (not the last group), so a fused amax
  // that kept only one group's value would give another scale.
  ASSERT_EQ(FillRandomNormalBf16(*a_src, a_n, 6, 1, st), cudaSuccess);
  ASSERT_EQ(FillRandomNormalBf16(*bt_src, b_n, 6, 2, st), cudaSuccess);
  const __nv_bfloat16 spike = __float2bfloat16(24.0f);
  ASSERT_EQ(cudaMemcpyAsync(*a_src + 5, &spike, sizeof(spike), cudaMemcpyHostToDevice, st),
            cudaSuccess);
  ASSERT_EQ(cudaMemcpyAsync(*bt_src + 7, &spike, sizeof(spike), cudaMemcpyHostToDevice, st),
            cudaSuccess);
  for (int i = 0; i < 2; ++i) {
    ASSERT_TRUE(qa->Enqueue(st, true).ok() && qb->Enqueue(st, true).ok());
  }
  RunGroupedGemm(item, *qa, *qb, *c);
  auto da = pool_.GetAs<float>("deq.a", a_n);
  auto db = pool_.GetAs<float>("deq.b", b_n);
  ASSERT_TRUE(da.ok() && db.ok());
  ASSERT_TRUE(qa->Dequantize(*da, st).ok() && qb->Dequantize(*db, st).ok());
  ASSERT_EQ(cudaStreamSynchronize(st), cudaSuccess);

  const std::vector<float> a_deq = ToHost<float>(*da, a_n);
  const std::vector<float> b_deq = ToHost<float>(*db, b_n);
  EXPECT_EQ(a_deq, quant::Dequantize(quant::QuantizeCurrent(Bf16ToHostFloat(*a_src, a_n),
                                                            kGroups * s.m, s.k, ca.format),
                                     ca.format));
  EXPECT_EQ(b_deq, quant::Dequantize(quant::QuantizeCurrent(Bf16ToHostFloat(*bt_src, b_n),
                                                            kGroups * s.n, s.k, cb.format),
                                     cb.format));

  // Transposed copies: group g's [cols, rows] is the transpose of its [rows, cols].
  for (const OperandQuantizer* q : {&*qa, &*qb}) {
    const int64_t rows = q->config().rows, cols = q->config().cols, n = rows * cols;
    ASSERT_NE(q->transposed_data(), nullptr);
    const std::vector<uint8_t> qd = ToHost<uint8_t>(q->data(), kGroups * n);
    const std::vector<uint8_t> qt = ToHost<uint8_t>(q->transposed_data(), kGroups * n);
    int64_t mismatches = 0;
    for (int64_t g = 0; g < kGroups; ++g)
      for (int64_t r = 0; r < rows; ++r)
        for (int64_t col = 0; col < cols; ++col)
          mismatches += qt[g * n + col * rows + r] != qd[g * n + r * cols + col];
    EXPECT_EQ(mismatches, 0) << q->config().slot;
  }

  // The grouped GEMM against the host fp32 GEMM of each group's dequantized operands.
  const std::vector<float> out = Bf16ToHostFloat(*c, kGroups * s.m * s.n);
  std::vector<float> host_c(kGroups * s.m * s.n);
  for (int64_t g = 0; g < kGroups; ++g) {
    std::vector<float> hg(s.m * s.n);
    device::GemmFp32(std::span<const float>(a_deq).subspan(g * s.m * s.k, s.m * s.k),
                     std::span<const float>(b_deq).subspan(g * s.n * s.k, s.n * s.k), s.m, s.k, s.n,
                     hg, 2);
    std::copy(hg.begin(), hg.end(), host_c.begin() + g * s.m * s.n);
    const std::vector<float> og(out.begin() + g * s.m * s.n, out.begin() + (g + 1) * s.m * s.n);
    EXPECT_LE(RelError(og, hg), ErrorThreshold(recipe, fast_accum_)) << "group " << g;
  }
  const double err = RelError(out, host_c);
  EXPECT_LE(err, ErrorThreshold(recipe, fast_accum_));
  std::printf("grouped cross-check %-11s %-5s x%ld: rel_error vs host fp32 %.3e\n",
              Name(recipe).c_str(), Name(pass).c_str(), kGroups, err);
}

// The verifier's chunks: an operand's dequantization of groups [first, first + count) is
// that slice of its whole dequantization, for every recipe with a grouped form (fp8-block:
// the 1x128 activation and the 128x128 weight, whose rows are not a multiple of 128);
// ranges outside the groups are InvalidArgument.
using DequantizeGroupsTest = GroupedCrossCheckTest;

TEST_P(DequantizeGroupsTest, GroupRangesAreSlicesOfTheWhole) {
  const auto [recipe, pass] = GetParam();
  core::WorkItem item;
  item.op.pass = pass;
  item.op.shape = {200, 384, 144};
  item.op.groups = kGroups;
  item.recipe = recipe;
  const core::TimingOptions timing;
  const core::GemmShape& s = item.op.shape;
  const cudaStream_t st = stream_.get();
  const int64_t a_n = kGroups * s.m * s.k, b_n = kGroups * s.n * s.k;
  auto a_src = pool_.GetAs<__nv_bfloat16>("a.src", a_n);
  auto bt_src = pool_.GetAs<__nv_bfloat16>("bt.src", b_n);
  ASSERT_TRUE(a_src.ok() && bt_src.ok());
  ASSERT_EQ(FillRandomNormalBf16(*a_src, a_n, 7, 1, st), cudaSuccess);
  ASSERT_EQ(FillRandomNormalBf16(*bt_src, b_n, 7, 2, st), cudaSuccess);
  auto qa = OperandQuantizer::Create(pool_, OperandA(item, timing), *a_src, false);
  auto qb = OperandQuantizer::Create(pool_, OperandBt(item, timing), *bt_src, false);
  ASSERT_TRUE(qa.ok() && qb.ok()) << qa.status() << qb.status();
  ASSERT_TRUE(qa->SeedHistory(st).ok() && qb->SeedHistory(st).ok());
  ASSERT_TRUE(qa->Enqueue(st, false).ok() && qb->Enqueue(st, false).ok());
  for (const OperandQuantizer* q : {&*qa, &*qb}) {
    const int64_t n = q->config().rows * q->config().cols;
    auto whole = pool_.GetAs<float>("deq.whole", kGroups * n);
    auto part = pool_.GetAs<float>("deq.part", kGroups * n);
    ASSERT_TRUE(whole.ok() && part.ok());
    ASSERT_TRUE(q->Dequantize(*whole, st).ok());
    ASSERT_EQ(cudaStreamSynchronize(st), cudaSuccess);
    const std::vector<float> all = ToHost<float>(*whole, kGroups * n);
    for (const auto& [first, count] : {std::pair<int64_t, int64_t>{0, 1}, {1, 2}, {3, 1}, {0, 4}}) {
      ASSERT_TRUE(q->DequantizeGroups(first, count, *part, st).ok());
      ASSERT_EQ(cudaStreamSynchronize(st), cudaSuccess);
      const std::vector<float> got = ToHost<float>(*part, count * n);
      EXPECT_TRUE(std::equal(got.begin(), got.end(), all.begin() + first * n))
          << q->config().slot << ": groups [" << first << ", " << first + count << ")";
    }
    for (const auto& [first, count] : {std::pair<int64_t, int64_t>{3, 2}, {-1, 1}, {0, 0}}) {
      const absl::Status bad = q->DequantizeGroups(first, count, *part, st);
      EXPECT_EQ(bad.code(), absl::StatusCode::kInvalidArgument) << first << " " << count;
      EXPECT_THAT(bad.message(), HasSubstr("outside [0, 4)"));
    }
  }
  std::printf("dequantize group ranges %-11s: slices of the whole\n", Name(recipe).c_str());
}

INSTANTIATE_TEST_SUITE_P(
    EveryGroupedRecipe, DequantizeGroupsTest,
    ::testing::Combine(::testing::Values(Recipe::kBf16, Recipe::kFp8Current, Recipe::kFp8Delayed,
                                         Recipe::kFp8Block, Recipe::kFp8Rowwise),
                       ::testing::Values(Pass::kFprop)));

INSTANTIATE_TEST_SUITE_P(
    PerTensor, GroupedCrossCheckTest,
    ::testing::Combine(::testing::Values(Recipe::kFp8Current, Recipe::kFp8Delayed),
                       ::testing::Values(Pass::kFprop, Pass::kDgrad, Pass::kWgrad)));

}  // namespace
}  // namespace gemmprof::kernels
