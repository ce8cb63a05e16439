// fp8-block grouped GEMMs (MoE experts) in the CUDA runner. Each group is quantized as its
// own tensor and keeps its own block scales, in cuBLASLt's layout, back to back: group g's
// tensor at g times one matrix's. The GEMM is one strided-batched cuBLASLt call whose
// scale pointers point at group 0's tensors; cuBLASLt has no batch-stride attribute for
// block scales, and cuBLASLt 13.1 on Hopper offers no algorithm for block scales with a
// batch at all (H200: the heuristic answers NOT_SUPPORTED). Where it has none, the runner
// runs one call per group, each at its group's data and scales, back to back in the
// item's CUDA graph, and says so in the item's notes. The CUTLASS grouped kernel
// (cutlass_block_gemm_test.cc) is timed against that and runs the item where faster.
//   - GroupedBlockRunnerTest: through device::Runner, groups 1, 2, 4 on shapes with rows
//     and K that are not multiples of 128, every pass, mode and accounting: every item
//     runs and passes verification.
//   - GroupedBlockEquivalenceTest: the grouped quantization equals each group quantized
//     alone, byte for byte (data, transposed copies, cuBLASLt-layout scales, dequantized
//     values against the host); each group's slice runs as an ordinary GEMM; and, where
//     cuBLASLt runs the batched call, group g of it equals group g alone (1e-6), with
//     groups whose magnitudes differ by powers of two so a scale read from another
//     group's tensor would be off by that factor. Skipped, with the reason, at the point
//     where cuBLASLt refuses the batched call.
//   - VerifierCatchesScalesOfTheWrongGroup: the runner's verification passes grouped
//     outputs made with each group's scales and calls outputs made with group 0's scales
//     for every group `incorrect`.
// Plus the grouped scale-layout conversions against their index formulas and the memory
// accounting of per-group scales. Fails without a GPU (the memory test needs none).
#include <cuda_bf16.h>
#include <cuda_runtime_api.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <span>
#include <string>
#include <tuple>
#include <vector>

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
#include "kernels/runner/gemm_verifier.h"
#include "kernels/runner/recipe_rules.h"
#include "tests/gpu/gpu_test_util.h"

namespace gemmprof::kernels {
namespace {

using core::Mode;
using core::Pass;
using core::Recipe;
using testing::Bf16ToHostFloat;
using ::testing::HasSubstr;
using testing::RelError;
using testing::ToHost;
namespace quant = core::quant;

std::string Name(Pass p) { return std::string(core::ToString(p)); }

int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

// M x K x N: rows (M, and N for B^T) not multiples of 128, K = 384 (pads the BLK128x128
// stride) and K = 400 (not a multiple of 128), and one shape of whole 128-blocks.
const core::GemmShape kShapes[] = {{200, 384, 272}, {200, 400, 272}, {256, 512, 384}};

// The refusal of a grouped block-scaled GEMM that cuBLASLt has no algorithm for.
void ExpectNoBatchedAlgorithm(const absl::Status& st, const core::GemmShape& shape,
                              int64_t groups) {
  EXPECT_EQ(st.code(), absl::StatusCode::kFailedPrecondition) << st;
  EXPECT_THAT(std::string(st.message()),
              HasSubstr(absl::StrCat("cuBLASLt has no algorithm for ", shape.ToString(), " x ",
                                     groups, " groups")));
  EXPECT_THAT(std::string(st.message()), HasSubstr("VEC128_32F block scales"));
}

// ---------------------------------------------------------------------------------------
// Through the runner (device::Runner), as the queue calls it.

class GroupedBlockRunnerTest
    : public testing::RunnerSuite,
      public ::testing::WithParamInterface<std::tuple<int /*shape*/, Pass, int /*mode*/>> {};

// mode: 0 prequant, 1 autocast (training-step accounting), 2 autocast (per-gemm).
TEST_P(GroupedBlockRunnerTest, OneTwoAndFourGroupsRunAndPassVerification) {
  const auto [shape_index, pass, mode_index] = GetParam();
  const core::GemmShape shape = kShapes[shape_index];
  core::TimingOptions t;
  t.warmup_iters = 3;
  t.timed_iters = 10;
  t.gpu_warmup_s = 0;
  t.accounting = mode_index == 2 ? core::Accounting::kPerGemm : core::Accounting::kTrainingStep;
  const Mode mode = mode_index == 0 ? Mode::kPrequant : Mode::kAutocast;
  const char* mode_name =
      mode_index == 0 ? "prequant" : (mode_index == 1 ? "training-step" : "per-gemm");
  double bytes_one_group = 0;
  for (int64_t groups : {1, 2, 4}) {
    SCOPED_TRACE(::testing::Message() << "groups " << groups);
    core::WorkItem item;
    item.id = 12;
    item.op.name = "expert_down";
    item.op.pass = pass;
    item.op.shape = shape;
    item.op.groups = groups;
    item.recipe = Recipe::kFp8Block;
    item.mode = mode;
    ASSERT_TRUE(device::CanImplementOne(*runner_, item, t).ok())
        << device::CanImplementOne(*runner_, item, t);
    auto m = device::MeasureOne(*runner_, item, t);
    ASSERT_TRUE(m.ok()) << m.status();
    EXPECT_THAT(m->notes, ::testing::Not(HasSubstr("timed out")));
    EXPECT_EQ(m->verification, core::Verification::kPassed)
        << "rel_error " << m->rel_error << " threshold " << m->error_threshold << " " << m->notes;
    EXPECT_LE(m->rel_error, m->error_threshold);
    EXPECT_EQ(m->error_threshold, ErrorThreshold(Recipe::kFp8Block, false));
    EXPECT_DOUBLE_EQ(m->flops, item.op.Flops());
    EXPECT_EQ(m->time.count, t.timed_iters);
    EXPECT_GT(m->time.median_ms, 0);
    if (groups == 1) {
      bytes_one_group = m->bytes;
      // (The library choice note names the "CUTLASS grouped" candidate; grouped notes start
      // with "grouped:".)
      EXPECT_THAT(m->notes, ::testing::Not(HasSubstr("grouped:")));
    } else {
      EXPECT_DOUBLE_EQ(m->bytes, groups * bytes_one_group);
      EXPECT_THAT(m->notes, HasSubstr("grouped: block scales per group"));
      // One CUTLASS launch where it measured faster; else one batched cuBLASLt
      // call, or (this cuBLASLt) one call per group with the refusal quoted.
      if (m->algorithm.find("CUTLASS") != std::string::npos) {
        EXPECT_THAT(m->notes,
                    HasSubstr(absl::StrCat("grouped: ", groups, " groups in one CUTLASS launch")));
        EXPECT_THAT(m->algorithm, HasSubstr(absl::StrCat(groups, " groups in one launch")));
      } else if (m->notes.find("strided-batched") == std::string::npos) {
        EXPECT_THAT(m->notes,
                    HasSubstr(absl::StrCat("grouped: ", groups, " cuBLASLt calls, one per group")));
        EXPECT_THAT(m->notes, HasSubstr(absl::StrCat("cuBLASLt has no algorithm for ",
                                                     shape.ToString(), " x ", groups, " groups")));
        EXPECT_THAT(m->algorithm, HasSubstr(absl::StrCat("(each of ", groups, " calls)")));
      }
    }
    std::printf("fp8-block %-5s %-13s %-11s x%d rel_error %.3e median %.4f ms quant %.4f ms %s\n",
                Name(pass).c_str(), mode_name, shape.ToString().c_str(), static_cast<int>(groups),
                m->rel_error, m->time.median_ms, m->quant_ms, m->algorithm.c_str());
  }
}

INSTANTIATE_TEST_SUITE_P(Hopper, GroupedBlockRunnerTest,
                         ::testing::Combine(::testing::Values(0, 1, 2),
                                            ::testing::Values(Pass::kFprop, Pass::kDgrad,
                                                              Pass::kWgrad),
                                            ::testing::Values(0, 1, 2)));

// ---------------------------------------------------------------------------------------
// The grouped operands against each group alone.

class GroupedBlockEquivalenceTest
    : public testing::LtSuite<
          ::testing::TestWithParam<std::tuple<int /*shape*/, Pass, int64_t /*groups*/>>> {
 protected:
  // Enqueues C = A * B^T, one cuBLASLt call. batch > 1: all groups of qa and qb, strided;
  // batch == 1: group `group` of them alone, its data and scales found at its offsets,
  // and its A scales at `a_scale_group`'s (another group's, to fake a misread).
  // Returns the algorithm's description, or MatmulPlan's error.
  absl::StatusOr<std::string> Gemm(const core::GemmShape& s, int64_t batch,
                                   const OperandQuantizer& qa, const OperandQuantizer& qb,
                                   __nv_bfloat16* c, int64_t group = 0,
                                   int64_t a_scale_group = -1) {
    if (a_scale_group < 0) a_scale_group = group;
    MatmulSpec spec;
    spec.m = s.m;
    spec.n = s.n;
    spec.k = s.k;
    spec.batch = batch;
    spec.a_type = qa.data_type();
    spec.bt_type = qb.data_type();
    spec.a = static_cast<const uint8_t*>(qa.data()) + group * s.m * s.k;
    spec.bt = static_cast<const uint8_t*>(qb.data()) + group * s.n * s.k;
    spec.c = c;
    spec.a_scale_mode = qa.scale_mode();
    spec.bt_scale_mode = qb.scale_mode();
    spec.a_scale =
        static_cast<const float*>(qa.gemm_scale()) + a_scale_group * qa.gemm_scale_group_floats();
    spec.bt_scale =
        static_cast<const float*>(qb.gemm_scale()) + group * qb.gemm_scale_group_floats();
    spec.fast_accum = false;  // fp8-block always splits (ResolveFastAccum)
    spec.workspace = workspace_.get();
    spec.workspace_bytes = workspace_.bytes();
    ASSIGN_OR_RETURN(MatmulPlan plan, MatmulPlan::Create(lt_.get(), spec, 1));
    RETURN_IF_ERROR(plan.Enqueue(stream_.get()));
    return plan.AlgorithmDescription();
  }

  // Group by group (batch 1 each) into c, groups x [m, n]; a_scale_group as in Gemm.
  void GemmPerGroup(const core::GemmShape& s, int64_t groups, const OperandQuantizer& qa,
                    const OperandQuantizer& qb, __nv_bfloat16* c, int64_t a_scale_group = -1) {
    for (int64_t g = 0; g < groups; ++g) {
      auto r = Gemm(s, 1, qa, qb, c + g * s.m * s.n, g, a_scale_group < 0 ? g : a_scale_group);
      ASSERT_TRUE(r.ok()) << r.status();
    }
  }

  // Random-normal BF16, groups x [rows, cols], group g multiplied by factors[g % 4]:
  // powers of two, so a group's quantized values are those of unscaled data and only its
  // scales carry the factor. A GEMM that read another group's scales would be off by the
  // ratio of the two groups' factors.
  __nv_bfloat16* Source(const std::string& slot, int64_t groups, int64_t rows, int64_t cols,
                        uint32_t id, const float (&factors)[4]) {
    const int64_t n = rows * cols;
    auto d = pool_.GetAs<__nv_bfloat16>(slot, groups * n);
    EXPECT_TRUE(d.ok());
    if (!d.ok()) return nullptr;
    EXPECT_EQ(FillRandomNormalBf16(*d, groups * n, 9, id, stream_.get()), cudaSuccess);
    EXPECT_EQ(cudaStreamSynchronize(stream_.get()), cudaSuccess);
    std::vector<__nv_bfloat16> h = ToHost<__nv_bfloat16>(*d, groups * n);
    for (int64_t i = 0; i < groups * n; ++i)
      h[i] = __float2bfloat16(__bfloat162float(h[i]) * factors[(i / n) % 4]);
    EXPECT_EQ(cudaMemcpy(*d, h.data(), h.size() * sizeof(h[0]), cudaMemcpyHostToDevice),
              cudaSuccess);
    return *d;
  }

  DevicePool pool_;
};

constexpr float kFactorsA[4] = {1.0f, 64.0f, 1.0f / 64, 8.0f};
constexpr float kFactorsBt[4] = {0.25f, 16.0f, 4.0f, 1.0f / 32};

TEST_P(GroupedBlockEquivalenceTest, EachGroupEqualsThatGroupAlone) {
  const auto [shape_index, pass, groups] = GetParam();
  const core::GemmShape s = kShapes[shape_index];
  core::WorkItem item;
  item.op.pass = pass;
  item.op.shape = s;
  item.op.groups = groups;
  item.recipe = Recipe::kFp8Block;
  const core::TimingOptions timing;
  const OperandConfig ca = OperandA(item, timing), cb = OperandBt(item, timing);
  ASSERT_EQ(ca.groups, groups);
  const cudaStream_t st = stream_.get();
  __nv_bfloat16* a_src = Source("a.src", groups, s.m, s.k, 1, kFactorsA);
  __nv_bfloat16* bt_src = Source("bt.src", groups, s.n, s.k, 2, kFactorsBt);
  ASSERT_TRUE(a_src != nullptr && bt_src != nullptr);
  auto c_loop = pool_.GetAs<__nv_bfloat16>("c.loop", groups * s.m * s.n);
  auto c = pool_.GetAs<__nv_bfloat16>("c", groups * s.m * s.n);
  ASSERT_TRUE(c_loop.ok() && c.ok());

  auto qa = OperandQuantizer::Create(pool_, ca, a_src, true);
  auto qb = OperandQuantizer::Create(pool_, cb, bt_src, true);
  ASSERT_TRUE(qa.ok() && qb.ok()) << qa.status() << qb.status();
  const int64_t a_n = s.m * s.k, b_n = s.n * s.k;
  const int64_t a_sf = qa->gemm_scale_group_floats(), b_sf = qb->gemm_scale_group_floats();
  ASSERT_EQ(a_sf, ca.weight ? Blk128ScaleFloats(s.m, s.k) : Vec128ScaleFloats(s.m, s.k));
  ASSERT_EQ(b_sf, cb.weight ? Blk128ScaleFloats(s.n, s.k) : Vec128ScaleFloats(s.n, s.k));

  // The one-launch quantization (no transposed copies; whole blocks per group) and the
  // per-group one (with them) give the same data and scales.
  ASSERT_TRUE(qa->Enqueue(st, false).ok() && qb->Enqueue(st, false).ok());
  ASSERT_EQ(cudaStreamSynchronize(st), cudaSuccess);
  const std::vector<uint8_t> a_once = ToHost<uint8_t>(qa->data(), groups * a_n);
  const std::vector<float> a_scales_once = ToHost<float>(qa->gemm_scale(), groups * a_sf);
  const std::vector<uint8_t> b_once = ToHost<uint8_t>(qb->data(), groups * b_n);
  const std::vector<float> b_scales_once = ToHost<float>(qb->gemm_scale(), groups * b_sf);
  EXPECT_TRUE(qa->QuantizesPerGroup(true) && qb->QuantizesPerGroup(true));
  ASSERT_TRUE(qa->Enqueue(st, true).ok() && qb->Enqueue(st, true).ok());
  GemmPerGroup(s, groups, *qa, *qb, *c_loop);
  ASSERT_EQ(cudaStreamSynchronize(st), cudaSuccess);
  const std::vector<uint8_t> a_q = ToHost<uint8_t>(qa->data(), groups * a_n);
  const std::vector<uint8_t> b_q = ToHost<uint8_t>(qb->data(), groups * b_n);
  const std::vector<float> a_scales = ToHost<float>(qa->gemm_scale(), groups * a_sf);
  const std::vector<float> b_scales = ToHost<float>(qb->gemm_scale(), groups * b_sf);
  EXPECT_EQ(a_q, a_once);
  EXPECT_EQ(b_q, b_once);
  EXPECT_EQ(0, std::memcmp(a_scales.data(), a_scales_once.data(), a_scales.size() * 4));
  EXPECT_EQ(0, std::memcmp(b_scales.data(), b_scales_once.data(), b_scales.size() * 4));
  const std::vector<uint8_t> a_qt = ToHost<uint8_t>(qa->transposed_data(), groups * a_n);
  const std::vector<uint8_t> b_qt = ToHost<uint8_t>(qb->transposed_data(), groups * b_n);
  const std::vector<float> loop_out = Bf16ToHostFloat(*c_loop, groups * s.m * s.n);

  // The grouped dequantization (what the runner's verification multiplies).
  auto da = pool_.GetAs<float>("deq.a", groups * a_n);
  auto db = pool_.GetAs<float>("deq.b", groups * b_n);
  ASSERT_TRUE(da.ok() && db.ok());
  ASSERT_TRUE(qa->Dequantize(*da, st).ok() && qb->Dequantize(*db, st).ok());
  ASSERT_EQ(cudaStreamSynchronize(st), cudaSuccess);
  const std::vector<float> a_deq = ToHost<float>(*da, groups * a_n);
  const std::vector<float> b_deq = ToHost<float>(*db, groups * b_n);
  const std::vector<float> a_host = Bf16ToHostFloat(a_src, groups * a_n);
  const std::vector<float> b_host = Bf16ToHostFloat(bt_src, groups * b_n);

  for (int64_t g = 0; g < groups; ++g) {
    SCOPED_TRACE(::testing::Message() << "group " << g);
    OperandConfig ca1 = ca, cb1 = cb;
    ca1.groups = cb1.groups = 1;
    ca1.slot = "a1";
    cb1.slot = "bt1";
    auto qa1 = OperandQuantizer::Create(pool_, ca1, a_src + g * a_n, true);
    auto qb1 = OperandQuantizer::Create(pool_, cb1, bt_src + g * b_n, true);
    ASSERT_TRUE(qa1.ok() && qb1.ok());
    ASSERT_TRUE(qa1->Enqueue(st, true).ok() && qb1->Enqueue(st, true).ok());
    ASSERT_EQ(cudaStreamSynchronize(st), cudaSuccess);

    // Quantized data, transposed copies and cuBLASLt-layout scales: group g's slice of
    // the grouped operand is the single-group operand, byte for byte.
    auto slice = [g](const auto& v, int64_t n) {
      return std::vector(v.begin() + g * n, v.begin() + (g + 1) * n);
    };
    EXPECT_EQ(slice(a_q, a_n), ToHost<uint8_t>(qa1->data(), a_n));
    EXPECT_EQ(slice(b_q, b_n), ToHost<uint8_t>(qb1->data(), b_n));
    EXPECT_EQ(slice(a_qt, a_n), ToHost<uint8_t>(qa1->transposed_data(), a_n));
    EXPECT_EQ(slice(b_qt, b_n), ToHost<uint8_t>(qb1->transposed_data(), b_n));
    const std::vector<float> a_s1 = ToHost<float>(qa1->gemm_scale(), a_sf);
    const std::vector<float> b_s1 = ToHost<float>(qb1->gemm_scale(), b_sf);
    EXPECT_EQ(0, std::memcmp(a_scales.data() + g * a_sf, a_s1.data(), a_sf * 4));
    EXPECT_EQ(0, std::memcmp(b_scales.data() + g * b_sf, b_s1.data(), b_sf * 4));

    // Dequantized group g == the host's quantization of group g alone.
    const std::vector<float> ag = slice(a_deq, a_n), bg = slice(b_deq, b_n);
    EXPECT_EQ(ag, quant::Dequantize(
                      quant::QuantizeBlock(slice(a_host, a_n), s.m, s.k, ca.weight ? 128 : 1)));
    EXPECT_EQ(bg, quant::Dequantize(
                      quant::QuantizeBlock(slice(b_host, b_n), s.n, s.k, cb.weight ? 128 : 1)));

    // Group g's slices as an ordinary GEMM == the fp32 product of its dequantized operands.
    std::vector<float> ref(s.m * s.n);
    device::GemmFp32(ag, bg, s.m, s.k, s.n, ref, 2);
    EXPECT_LE(RelError(slice(loop_out, s.m * s.n), ref), ErrorThreshold(Recipe::kFp8Block, false));
  }

  // The strided-batched call, where cuBLASLt has an algorithm for it.
  absl::StatusOr<std::string> batched = Gemm(s, groups, *qa, *qb, *c);
  if (!batched.ok()) {
    ExpectNoBatchedAlgorithm(batched.status(), s, groups);
    GTEST_SKIP() << "the batched call: " << batched.status().message();
  }
  ASSERT_EQ(cudaStreamSynchronize(st), cudaSuccess);
  const std::vector<float> out = Bf16ToHostFloat(*c, groups * s.m * s.n);
  for (int64_t g = 0; g < groups; ++g) {
    // Same inputs and scales; only the kernel cuBLASLt picks for a batch may differ from
    // the one for a single matrix (split accumulation in fp32 either way): 1e-6, not 0.
    const std::vector<float> og(out.begin() + g * s.m * s.n, out.begin() + (g + 1) * s.m * s.n);
    const std::vector<float> alone(loop_out.begin() + g * s.m * s.n,
                                   loop_out.begin() + (g + 1) * s.m * s.n);
    int64_t differ = 0;
    for (int64_t i = 0; i < s.m * s.n; ++i) differ += og[i] != alone[i];
    const double err = RelError(og, alone);
    EXPECT_LE(err, 1e-6) << "group " << g << ": " << differ << " of " << s.m * s.n
                         << " outputs differ; batched " << *batched;
    std::printf("fp8-block %-5s %-11s group %ld of %ld: batched vs alone %.3e (%ld differ)\n",
                Name(pass).c_str(), s.ToString().c_str(), g, groups, err, differ);
  }
}

// The runner's verification dequantizes each group with its own scales: outputs made
// with each group's scales pass, outputs made with group 0's A scales for every group are
// `incorrect`. (Group by group here, so it holds whether or not cuBLASLt runs the batch.)
TEST_P(GroupedBlockEquivalenceTest, VerifierCatchesScalesOfTheWrongGroup) {
  const auto [shape_index, pass, groups] = GetParam();
  if (shape_index != 0) return;  // one shape per pass and group count is enough
  const core::GemmShape s = kShapes[shape_index];
  core::WorkItem item;
  item.op.pass = pass;
  item.op.shape = s;
  item.op.groups = groups;
  item.recipe = Recipe::kFp8Block;
  const core::TimingOptions timing;
  const cudaStream_t st = stream_.get();
  __nv_bfloat16* a_src = Source("a.src", groups, s.m, s.k, 1, kFactorsA);
  __nv_bfloat16* bt_src = Source("bt.src", groups, s.n, s.k, 2, kFactorsBt);
  ASSERT_TRUE(a_src != nullptr && bt_src != nullptr);
  auto c = pool_.GetAs<__nv_bfloat16>("c", groups * s.m * s.n);
  ASSERT_TRUE(c.ok());
  auto qa = OperandQuantizer::Create(pool_, OperandA(item, timing), a_src, false);
  auto qb = OperandQuantizer::Create(pool_, OperandBt(item, timing), bt_src, false);
  ASSERT_TRUE(qa.ok() && qb.ok());
  ASSERT_TRUE(qa->Enqueue(st, false).ok() && qb->Enqueue(st, false).ok());
  const double threshold = ErrorThreshold(Recipe::kFp8Block, false);

  GemmPerGroup(s, groups, *qa, *qb, *c);
  auto right = VerifyGemm(lt_.get(), pool_, *qa, *qb, *c, s.m, s.n, s.k, groups, threshold,
                          workspace_.get(), workspace_.bytes(), st);
  ASSERT_TRUE(right.ok()) << right.status();
  EXPECT_EQ(right->verdict, core::Verification::kPassed) << right->rel_error;

  // The same check a few groups at a time, as a large MoE's fp32 reference is made when
  // the device cannot hold it whole: the same verdict, the same worst error.
  auto chunked = VerifyGemm(lt_.get(), pool_, *qa, *qb, *c, s.m, s.n, s.k, groups, threshold,
                            workspace_.get(), workspace_.bytes(), st, /*max_chunk_groups=*/3);
  ASSERT_TRUE(chunked.ok()) << chunked.status();
  EXPECT_EQ(chunked->verdict, core::Verification::kPassed) << chunked->rel_error;
  EXPECT_NEAR(chunked->rel_error, right->rel_error, 1e-3 * right->rel_error);
  if (groups > 3) EXPECT_THAT(chunked->note, HasSubstr("3 groups at a time"));

  GemmPerGroup(s, groups, *qa, *qb, *c, /*a_scale_group=*/0);
  auto wrong = VerifyGemm(lt_.get(), pool_, *qa, *qb, *c, s.m, s.n, s.k, groups, threshold,
                          workspace_.get(), workspace_.bytes(), st);
  ASSERT_TRUE(wrong.ok()) << wrong.status();
  EXPECT_EQ(wrong->verdict, core::Verification::kIncorrect) << wrong->rel_error;
  EXPECT_GT(wrong->rel_error, 0.5);
  auto wrong_chunked = VerifyGemm(lt_.get(), pool_, *qa, *qb, *c, s.m, s.n, s.k, groups, threshold,
                                  workspace_.get(), workspace_.bytes(), st,
                                  /*max_chunk_groups=*/1);
  ASSERT_TRUE(wrong_chunked.ok()) << wrong_chunked.status();
  EXPECT_EQ(wrong_chunked->verdict, core::Verification::kIncorrect);
  EXPECT_NEAR(wrong_chunked->rel_error, wrong->rel_error, 1e-3 * wrong->rel_error);
  std::printf("fp8-block %-5s x%ld: own scales rel_error %.3e, group 0's for all %.3e\n",
              Name(pass).c_str(), groups, right->rel_error, wrong->rel_error);
}

INSTANTIATE_TEST_SUITE_P(Hopper, GroupedBlockEquivalenceTest,
                         ::testing::Combine(::testing::Values(0, 1, 2),
                                            ::testing::Values(Pass::kFprop, Pass::kWgrad),
                                            ::testing::Values(int64_t{2}, int64_t{4})));

// ---------------------------------------------------------------------------------------
// The grouped scale-layout conversions against their index formulas.

TEST(GroupedBlockLayoutTest, GroupGsTensorStartsAtGTimesOneMatrixTensor) {
  ASSERT_GT(CudaDeviceCount(), 0) << "gpu tests need a CUDA device";
  const int64_t groups = 3, rows = 202, cols = 400, kb = CeilDiv(cols, 128);
  for (bool weight : {false, true}) {
    SCOPED_TRACE(weight ? "BLK128x128" : "VEC128");
    const int64_t grid_rows = weight ? CeilDiv(rows, 128) : rows;
    std::vector<float> raw(groups * grid_rows * kb);
    for (size_t i = 0; i < raw.size(); ++i) raw[i] = static_cast<float>(i) + 0.5f;
    const int64_t per = weight ? Blk128ScaleFloats(rows, cols) : Vec128ScaleFloats(rows, cols);
    auto in = DeviceBuffer::Create(raw.size() * 4);
    auto out = DeviceBuffer::Create(groups * per * 4);
    ASSERT_TRUE(in.ok() && out.ok());
    ASSERT_EQ(cudaMemcpy(in->get(), raw.data(), raw.size() * 4, cudaMemcpyHostToDevice),
              cudaSuccess);
    ASSERT_EQ(weight
                  ? ToBlk128Layout(in->as<float>(), groups, rows, cols, out->as<float>(), nullptr)
                  : ToVec128Layout(in->as<float>(), groups, rows, cols, out->as<float>(), nullptr),
              cudaSuccess);
    const std::vector<float> h = ToHost<float>(out->get(), groups * per);
    for (int64_t g = 0; g < groups; ++g) {
      const float* grid = raw.data() + g * grid_rows * kb;
      const float* t = h.data() + g * per;
      if (weight) {
        const int64_t stride = Blk128Stride(cols);
        ASSERT_EQ(per, grid_rows * stride);
        for (int64_t r = 0; r < grid_rows; ++r)
          for (int64_t b = 0; b < stride; ++b)
            ASSERT_EQ(t[r * stride + b], b < kb ? grid[r * kb + b] : 1.0f) << g << " " << r;
      } else {
        const int64_t stride = Vec128RowStride(rows);
        ASSERT_EQ(stride, 204);
        ASSERT_EQ(per, kb * stride);
        for (int64_t b = 0; b < kb; ++b)
          for (int64_t r = 0; r < stride; ++r)
            ASSERT_EQ(t[b * stride + r], r < rows ? grid[r * kb + b] : 1.0f) << g << " " << r;
      }
    }
  }
}

// ---------------------------------------------------------------------------------------
// Memory accounting (no device needed): every group's data and scales are counted.

TEST(GroupedBlockMemoryTest, ExtraBytesCountEveryGroupsScales) {
  const int64_t groups = 4, rows = 200, cols = 400, history = 16;
  OperandConfig c;
  c.recipe = Recipe::kFp8Block;
  c.rows = rows;
  c.cols = cols;
  c.groups = groups;
  c.amax_history_len = history;
  const int64_t kb = CeilDiv(cols, 128), data = groups * rows * cols;
  const int64_t scalars = (history + groups + 48) * 4;
  // 1x128: raw [rows, kb], transposed raw [cols, ceil(rows/128)], VEC128 tensor.
  const int64_t raw = rows * kb * 4, raw_t = cols * CeilDiv(rows, 128) * 4;
  const int64_t vec = kb * Vec128RowStride(rows) * 4;
  EXPECT_EQ(OperandQuantizer::ExtraBytes(c, false), data + groups * (raw + vec) + scalars);
  EXPECT_EQ(OperandQuantizer::ExtraBytes(c, true),
            2 * data + groups * (raw + raw_t + vec) + scalars);
  // 128x128: raw and transposed raw [ceil(rows/128), kb], BLK128x128 tensor.
  c.weight = true;
  const int64_t braw = CeilDiv(rows, 128) * kb * 4;
  const int64_t blk = CeilDiv(rows, 128) * Blk128Stride(cols) * 4;
  EXPECT_EQ(OperandQuantizer::ExtraBytes(c, true), 2 * data + groups * (2 * braw + blk) + scalars);
  EXPECT_TRUE(CheckGroupedRecipe(Recipe::kFp8Block, groups, "operand a").ok());
  EXPECT_EQ(CheckGroupedRecipe(Recipe::kMxfp8, groups, "operand a").code(),
            absl::StatusCode::kUnimplemented);
  EXPECT_EQ(CheckGroupedRecipe(Recipe::kNvfp4, groups, "operand a").code(),
            absl::StatusCode::kUnimplemented);
}

}  // namespace
}  // namespace gemmprof::kernels
