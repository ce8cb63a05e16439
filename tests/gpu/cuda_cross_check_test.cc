// Cross-checks the CUDA runner's building blocks against the host: the device's
// quantize + dequantize against core/quant's emulation of the same BF16 data,
// the device GEMM of quantized operands against a host fp32 GEMM of the dequantized
// operands copied back, the scale-layout conversions against their index formulas, and
// the verifier against a corrupted output (it must say `incorrect`). Fails without a GPU.
#include <cuda_bf16.h>
#include <cuda_runtime_api.h>

#include <cmath>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/quant/quant.h"
#include "core/status.h"
#include "device/host/host_gemm.h"
#include "gtest/gtest.h"
#include "kernels/cublaslt/cublaslt_handles.h"
#include "kernels/cublaslt/matmul_plan.h"
#include "kernels/cuda/cuda_handles.h"
#include "kernels/cuda/device_kernels.h"
#include "kernels/cuda/device_pool.h"
#include "kernels/quant/operand_quantizer.h"
#include "kernels/runner/cuda_runner_factory.h"
#include "kernels/runner/gemm_verifier.h"
#include "kernels/runner/recipe_rules.h"
#include "tests/gpu/gpu_test_util.h"

namespace gemmprof::kernels {
namespace {

using core::Pass;
using core::Recipe;
namespace quant = core::quant;

using testing::Bf16ToHostFloat;
using testing::RelError;
using testing::ToHost;

// The host's dequantized form of x for the operand config (the same numerics contract).
std::vector<float> HostDequantized(const OperandConfig& c, const std::vector<float>& x) {
  switch (c.recipe) {
    case Recipe::kBf16:
      return x;
    case Recipe::kFp8Current:
    case Recipe::kFp8Delayed:  // one seeded amax in the history = the current amax
      return quant::Dequantize(quant::QuantizeCurrent(x, c.rows, c.cols, c.format), c.format);
    case Recipe::kFp8Block:
      return quant::Dequantize(quant::QuantizeBlock(x, c.rows, c.cols, c.weight ? 128 : 1));
    default:
      return {};
  }
}

class CrossCheckTest : public testing::LtSuite<::testing::TestWithParam<std::tuple<Recipe, Pass>>> {
 protected:
  // BF16 operands A [m, k] and B^T [n, k] and an "output" C [m, n], all random normal (so
  // C is not their product: a check must call it incorrect), with A's and B^T's BF16
  // quantizers, from the pool's "a.src", "bt.src" and "c" slots.
  struct RandomGemm {
    __nv_bfloat16 *a = nullptr, *bt = nullptr, *c = nullptr;
    std::optional<OperandQuantizer> qa, qb;
  };
  absl::StatusOr<RandomGemm> MakeRandomGemm(int64_t m, int64_t n, int64_t k) {
    const cudaStream_t st = stream_.get();
    RandomGemm g;
    ASSIGN_OR_RETURN(g.a, pool_.GetAs<__nv_bfloat16>("a.src", m * k));
    ASSIGN_OR_RETURN(g.bt, pool_.GetAs<__nv_bfloat16>("bt.src", n * k));
    ASSIGN_OR_RETURN(g.c, pool_.GetAs<__nv_bfloat16>("c", m * n));
    auto fill = [st](__nv_bfloat16* p, int64_t count, int stream_id) {
      return FillRandomNormalBf16(p, count, 1, stream_id, st) == cudaSuccess;
    };
    if (!fill(g.a, m * k, 1) || !fill(g.bt, n * k, 2) || !fill(g.c, m * n, 3)) {
      return absl::InternalError("FillRandomNormalBf16 failed");
    }
    OperandConfig ca{.slot = "a", .rows = m, .cols = k}, cb{.slot = "bt", .rows = n, .cols = k};
    ASSIGN_OR_RETURN(g.qa, OperandQuantizer::Create(pool_, ca, g.a, false));
    ASSIGN_OR_RETURN(g.qb, OperandQuantizer::Create(pool_, cb, g.bt, false));
    return g;
  }

  DevicePool pool_;
};

TEST_P(CrossCheckTest, DeviceGemmMatchesHostGemmOfDequantizedOperands) {
  const auto [recipe, pass] = GetParam();
  core::WorkItem item;
  item.op.pass = pass;
  item.op.shape = {200, 384, 144};
  item.recipe = recipe;
  core::TimingOptions timing;
  timing.amax_history_len = 4;
  const core::GemmShape& s = item.op.shape;
  const cudaStream_t st = stream_.get();
  auto a_src = pool_.GetAs<__nv_bfloat16>("a.src", s.m * s.k);
  auto bt_src = pool_.GetAs<__nv_bfloat16>("bt.src", s.n * s.k);
  auto c = pool_.GetAs<__nv_bfloat16>("c", s.m * s.n);
  ASSERT_TRUE(a_src.ok() && bt_src.ok() && c.ok());
  ASSERT_EQ(FillRandomNormalBf16(*a_src, s.m * s.k, 5, 1, st), cudaSuccess);
  ASSERT_EQ(FillRandomNormalBf16(*bt_src, s.n * s.k, 5, 2, st), cudaSuccess);
  const OperandConfig ca = OperandA(item, timing), cb = OperandBt(item, timing);
  auto qa = OperandQuantizer::Create(pool_, ca, *a_src, true);
  auto qb = OperandQuantizer::Create(pool_, cb, *bt_src, true);
  ASSERT_TRUE(qa.ok() && qb.ok());
  ASSERT_TRUE(qa->SeedHistory(st).ok() && qb->SeedHistory(st).ok());
  ASSERT_TRUE(qa->Enqueue(st, true).ok() && qb->Enqueue(st, true).ok());

  MatmulSpec spec;
  spec.m = s.m;
  spec.n = s.n;
  spec.k = s.k;
  spec.a_type = qa->data_type();
  spec.bt_type = qb->data_type();
  spec.a = qa->data();
  spec.bt = qb->data();
  spec.c = *c;
  spec.a_scale_mode = qa->scale_mode();
  spec.bt_scale_mode = qb->scale_mode();
  spec.a_scale = qa->gemm_scale();
  spec.bt_scale = qb->gemm_scale();
  std::string note;
  spec.fast_accum = ResolveFastAccum(item, core::FastAccum::kDefault, &note);
  spec.workspace = workspace_.get();
  spec.workspace_bytes = workspace_.bytes();
  auto plan = MatmulPlan::Create(lt_.get(), spec, 1);
  ASSERT_TRUE(plan.ok()) << plan.status();
  ASSERT_TRUE(plan->Enqueue(st).ok());

  auto da = pool_.GetAs<float>("deq.a", s.m * s.k);
  auto db = pool_.GetAs<float>("deq.b", s.n * s.k);
  ASSERT_TRUE(da.ok() && db.ok());
  ASSERT_TRUE(qa->Dequantize(*da, st).ok() && qb->Dequantize(*db, st).ok());
  ASSERT_EQ(cudaStreamSynchronize(st), cudaSuccess);

  // Device dequantization == host emulation of the same BF16 data, exactly.
  const std::vector<float> a_deq = ToHost<float>(*da, s.m * s.k);
  const std::vector<float> b_deq = ToHost<float>(*db, s.n * s.k);
  EXPECT_EQ(a_deq, HostDequantized(ca, Bf16ToHostFloat(*a_src, s.m * s.k)));
  EXPECT_EQ(b_deq, HostDequantized(cb, Bf16ToHostFloat(*bt_src, s.n * s.k)));

  // Device low-precision GEMM vs host fp32 GEMM of the very same dequantized operands.
  std::vector<float> host_c(s.m * s.n);
  device::GemmFp32(a_deq, b_deq, s.m, s.k, s.n, host_c, 2);
  const double err = RelError(Bf16ToHostFloat(*c, s.m * s.n), host_c);
  const double threshold = ErrorThreshold(recipe, spec.fast_accum.value_or(false));
  EXPECT_LE(err, threshold);
  std::printf("cross-check %-11s %-5s rel_error vs host fp32 %.3e\n",
              std::string(core::ToString(recipe)).c_str(),
              std::string(core::ToString(pass)).c_str(), err);
}

TEST_P(CrossCheckTest, VerifierRejectsACorruptedOutput) {
  const auto [recipe, pass] = GetParam();
  if (recipe != Recipe::kBf16 || pass != Pass::kFprop) return;  // once is enough
  const int64_t m = 128, n = 128, k = 128;
  // The "output" is random data, not the product: the check must call it incorrect.
  auto g = MakeRandomGemm(m, n, k);
  ASSERT_TRUE(g.ok()) << g.status();
  auto v = VerifyGemm(lt_.get(), pool_, *g->qa, *g->qb, g->c, m, n, k, /*groups=*/1, 1e-2,
                      workspace_.get(), workspace_.bytes(), stream_.get());
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_EQ(v->verdict, core::Verification::kIncorrect);
  EXPECT_GT(v->rel_error, 0.5);
}

// A device short of memory for the fp32 reference while the pool still holds an earlier
// measurement's buffers: the verifier frees those (ReleaseUnused) and checks the output.
TEST_P(CrossCheckTest, VerifierFreesBuffersOfEarlierUsesWhenShortOfMemory) {
  const auto [recipe, pass] = GetParam();
  if (recipe != Recipe::kBf16 || pass != Pass::kFprop) return;  // once is enough
  const int64_t m = 8192, n = 8192, k = 8192;
  const size_t reference_bytes = 4 * (m * k + n * k + m * n);  // 768 MiB
  const size_t stale_bytes = size_t{1} << 30;
  const cudaStream_t st = stream_.get();
  pool_.BeginUse();  // an earlier measurement, done
  ASSERT_TRUE(pool_.Get("earlier.a.src", stale_bytes).ok());
  pool_.BeginUse();  // this one
  auto g = MakeRandomGemm(m, n, k);
  ASSERT_TRUE(g.ok()) << g.status();
  ASSERT_EQ(cudaStreamSynchronize(st), cudaSuccess);
  // Leave 256 MiB less free than the reference needs; the earlier buffer frees 1 GiB.
  size_t free_bytes = 0, total_bytes = 0;
  ASSERT_EQ(cudaMemGetInfo(&free_bytes, &total_bytes), cudaSuccess);
  const size_t leave = reference_bytes - (size_t{256} << 20);
  ASSERT_GT(free_bytes, leave);
  auto blocker = DeviceBuffer::Create(free_bytes - leave);
  ASSERT_TRUE(blocker.ok()) << blocker.status();
  const size_t held_before = pool_.HeldBytes();
  auto v = VerifyGemm(lt_.get(), pool_, *g->qa, *g->qb, g->c, m, n, k, /*groups=*/1, 1e-2,
                      workspace_.get(), workspace_.bytes(), st);
  ASSERT_TRUE(v.ok()) << v.status();
  // Checked (the random "output" is not the product), not "not verified".
  EXPECT_EQ(v->verdict, core::Verification::kIncorrect) << v->note;
  EXPECT_EQ(v->note.find("not verified"), std::string::npos) << v->note;
  // The earlier buffer went, this measurement's stayed (its operands are still usable).
  EXPECT_LE(pool_.HeldBytes(), held_before - stale_bytes + reference_bytes + (size_t{16} << 20));
  auto again = pool_.GetAs<__nv_bfloat16>("a.src", m * k);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again, g->a);
}

INSTANTIATE_TEST_SUITE_P(
    Hopper, CrossCheckTest,
    ::testing::Combine(::testing::Values(Recipe::kBf16, Recipe::kFp8Current, Recipe::kFp8Delayed,
                                         Recipe::kFp8Block),
                       ::testing::Values(Pass::kFprop, Pass::kDgrad, Pass::kWgrad)));

TEST(ScaleLayoutTest, ConversionsFollowTheIndexFormulas) {
  ASSERT_GT(CudaDeviceCount(), 0) << "gpu tests need a CUDA device";
  const int64_t rows = 300, cols = 700, kb = (cols + 127) / 128;
  std::vector<float> raw(rows * kb);
  for (size_t i = 0; i < raw.size(); ++i) raw[i] = static_cast<float>(i) + 0.5f;
  auto in = DeviceBuffer::Create(raw.size() * 4);
  auto out = DeviceBuffer::Create(size_t{1} << 20);
  ASSERT_TRUE(in.ok() && out.ok());
  ASSERT_EQ(cudaMemcpy(in->get(), raw.data(), raw.size() * 4, cudaMemcpyHostToDevice), cudaSuccess);
  // VEC128: [kb][rows padded to 4], rows contiguous.
  ASSERT_EQ(ToVec128Layout(in->as<float>(), 1, rows, cols, out->as<float>(), nullptr), cudaSuccess);
  const int64_t stride = Vec128RowStride(rows);
  EXPECT_EQ(stride, 300);
  auto vec = ToHost<float>(out->get(), kb * stride);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t b = 0; b < kb; ++b) ASSERT_EQ(vec[b * stride + r], raw[r * kb + b]);
  // BLK128x128: [row blocks][kb padded to 4], K blocks contiguous.
  const int64_t rb = (rows + 127) / 128;
  ASSERT_EQ(ToBlk128Layout(in->as<float>(), 1, rows, cols, out->as<float>(), nullptr), cudaSuccess);
  const int64_t bstride = Blk128Stride(cols);
  EXPECT_EQ(bstride, 8);
  auto blk = ToHost<float>(out->get(), rb * bstride);
  for (int64_t r = 0; r < rb; ++r)
    for (int64_t b = 0; b < kb; ++b) ASSERT_EQ(blk[r * bstride + b], raw[r * kb + b]);
  // MX swizzle: 128x4 tiles, (r % 32) * 16 + (r % 128 / 32) * 4 + c % 4 inside a tile.
  const int64_t sc = 22;
  std::vector<uint8_t> bytes(rows * sc);
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<uint8_t>(i * 7 + 1);
  ASSERT_EQ(cudaMemcpy(in->get(), bytes.data(), bytes.size(), cudaMemcpyHostToDevice), cudaSuccess);
  ASSERT_EQ(SwizzleBlockScales(in->as<uint8_t>(), rows, sc, out->as<uint8_t>(), nullptr),
            cudaSuccess);
  auto sw = ToHost<uint8_t>(out->get(), SwizzledScaleBytes(rows, sc));
  EXPECT_EQ(SwizzledScaleBytes(rows, sc), 384 * 24);
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < sc; ++c) {
      const int64_t off =
          ((r / 128) * 6 + c / 4) * 512 + (r % 32) * 16 + (r % 128 / 32) * 4 + c % 4;
      ASSERT_EQ(sw[off], bytes[r * sc + c]) << r << "," << c;
    }
  }
}

// The heuristic asked again for a 1 MiB workspace: on cuBLASLt 13.1 (H100) its answer for
// fp8 64x14336x4096 is a kernel without split-K, where the 32 MiB answer splits K in two.
// The extra candidate is added once, only when new, only below the plan's workspace, and
// computes the same GEMM as the first. (The split-K answer needs 2 MiB of workspace,
// which is why a 1 MiB limit rules it out. Each scale gets its own allocation: with the
// second scale 4 bytes after the first, the split-K kernel refused to launch on an H100.)
class WorkspaceLimitedCandidateTest : public testing::LtSuite<::testing::Test> {
 protected:
  DevicePool pool_;
};

TEST_F(WorkspaceLimitedCandidateTest, AddedOnceWhenTheAnswerDiffersAndComputesTheSameGemm) {
  constexpr int64_t m = 64, k = 14336, n = 4096;
  const cudaStream_t st = stream_.get();
  auto a = pool_.GetAs<uint8_t>("a", m * k);
  auto bt = pool_.GetAs<uint8_t>("bt", n * k);
  auto c0 = pool_.GetAs<__nv_bfloat16>("c0", m * n);
  auto c1 = pool_.GetAs<__nv_bfloat16>("c1", m * n);
  auto a_scale = pool_.GetAs<float>("a.scale", 1);
  auto bt_scale = pool_.GetAs<float>("bt.scale", 1);
  ASSERT_TRUE(a.ok() && bt.ok() && c0.ok() && c1.ok() && a_scale.ok() && bt_scale.ok());
  // E4M3 bytes of small values (exponent field 5 or 7, any mantissa, any sign).
  std::vector<uint8_t> ha(m * k), hb(n * k);
  for (size_t i = 0; i < ha.size(); ++i)
    ha[i] = static_cast<uint8_t>(((i * 2654435761u) >> 7) & 0xBF) | 0x28;
  for (size_t i = 0; i < hb.size(); ++i)
    hb[i] = static_cast<uint8_t>(((i * 40503u) >> 5) & 0xBF) | 0x28;
  const float one = 1.0f;
  ASSERT_EQ(cudaMemcpy(*a, ha.data(), ha.size(), cudaMemcpyHostToDevice), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(*bt, hb.data(), hb.size(), cudaMemcpyHostToDevice), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(*a_scale, &one, sizeof(one), cudaMemcpyHostToDevice), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(*bt_scale, &one, sizeof(one), cudaMemcpyHostToDevice), cudaSuccess);
  MatmulSpec spec;
  spec.m = m;
  spec.n = n;
  spec.k = k;
  spec.a_type = spec.bt_type = CUDA_R_8F_E4M3;
  spec.a = *a;
  spec.bt = *bt;
  spec.c = *c0;
  spec.a_scale_mode = spec.bt_scale_mode = CUBLASLT_MATMUL_MATRIX_SCALE_SCALAR_32F;
  spec.a_scale = *a_scale;
  spec.bt_scale = *bt_scale;
  spec.fast_accum = true;
  spec.workspace = workspace_.get();
  spec.workspace_bytes = workspace_.bytes();
  auto plan = MatmulPlan::Create(lt_.get(), spec, 1);
  ASSERT_TRUE(plan.ok()) << plan.status();
  ASSERT_EQ(plan->candidates(), 1);
  // Not below the plan's workspace: nothing to ask.
  auto same = plan->AddWorkspaceLimitedCandidate(workspace_.bytes());
  ASSERT_TRUE(same.ok()) << same.status();
  EXPECT_FALSE(*same);
  EXPECT_EQ(plan->candidates(), 1);
  auto added = plan->AddWorkspaceLimitedCandidate(size_t{1} << 20);
  ASSERT_TRUE(added.ok()) << added.status();
  if (!*added) {
    // Another cuBLASLt release or GPU may answer the same for both: nothing to compare.
    GTEST_SKIP() << "cuBLASLt's heuristic gives the same answer for 1 MiB and 32 MiB here ("
                 << plan->AlgorithmDescription() << "); cuBLASLt 13.1 on an H100 does not";
  }
  EXPECT_EQ(plan->candidates(), 2);
  auto again = plan->AddWorkspaceLimitedCandidate(size_t{1} << 20);
  ASSERT_TRUE(again.ok());
  EXPECT_FALSE(*again);
  EXPECT_EQ(plan->candidates(), 2);
  EXPECT_FALSE(plan->chose_workspace_limited());
  const absl::Status run0 = plan->Enqueue(st);
  ASSERT_TRUE(run0.ok()) << run0 << " (" << plan->AlgorithmDescription() << ")";
  const std::string first = plan->AlgorithmDescription();
  ASSERT_TRUE(plan->Choose(1, true).ok());
  EXPECT_TRUE(plan->chose_workspace_limited());
  const std::string limited = plan->AlgorithmDescription();
  EXPECT_NE(limited.find("the heuristic's answer for a 1 MiB workspace"), std::string::npos)
      << limited;
  EXPECT_EQ(first.find("MiB workspace"), std::string::npos) << first;
  // The same GEMM into another output: equal up to accumulation order.
  MatmulSpec other = spec;
  other.c = *c1;
  auto plan1 = MatmulPlan::Create(lt_.get(), other, 1);
  ASSERT_TRUE(plan1.ok());
  auto added1 = plan1->AddWorkspaceLimitedCandidate(size_t{1} << 20);
  ASSERT_TRUE(added1.ok() && *added1) << "the same spec got another heuristic answer";
  ASSERT_TRUE(plan1->Choose(1, true).ok());
  const absl::Status run1 = plan1->Enqueue(st);
  ASSERT_TRUE(run1.ok()) << run1 << " (" << plan1->AlgorithmDescription() << ")";
  ASSERT_EQ(cudaStreamSynchronize(st), cudaSuccess);
  const double err = RelError(Bf16ToHostFloat(*c1, m * n), Bf16ToHostFloat(*c0, m * n));
  EXPECT_LT(err, 1e-2) << first << " vs " << limited;
  std::printf("workspace-limited candidate: %s\n  first answer: %s\n  rel. difference %.2e\n",
              limited.c_str(), first.c_str(), err);
}

}  // namespace
}  // namespace gemmprof::kernels
