// CudaRunner::MeasureGroup on the device: identical work shared by work key, interleaved
// fixed and noise-aware rounds, back-to-back figures, a refused member in a group, a
// batch of several shapes, and the work keys themselves. Fails without a GPU.
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels/runner/recipe_rules.h"
#include "tests/gpu/gpu_test_util.h"

namespace gemmprof::kernels {
namespace {

using core::Mode;
using core::Pass;
using core::Recipe;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

class CudaGroupTest : public testing::RunnerSuite {
 protected:
  void SetUp() override {
    RunnerSuite::SetUp();
    // A job's start: measures the copy bandwidth every measurement carries.
    ASSERT_TRUE(runner_->BeginJob(Fixed(1)).ok());
  }
  static core::TimingOptions Fixed(int rounds) {
    core::TimingOptions t;
    t.warmup_iters = 3;
    t.timed_iters = rounds;
    t.gpu_warmup_s = 0;
    return t;
  }
  static core::WorkItem Item(int seq, Pass pass, Recipe recipe, Mode mode, int64_t m = 1024,
                             int64_t k = 2048, int64_t n = 1536) {
    core::WorkItem w;
    w.id = 100 + seq;
    w.seq = seq;
    w.op.name = "test";
    w.op.pass = pass;
    w.op.shape = {m, k, n};
    w.recipe = recipe;
    w.mode = mode;
    return w;
  }
  static core::GroupRequest Request(std::vector<core::WorkItem> items, core::TimingOptions t) {
    core::GroupRequest r;
    r.group_uid = "test/group";
    r.items = std::move(items);
    r.timing = t;
    return r;
  }
  static std::vector<core::WorkItem> Fprop5() {
    return {Item(1, Pass::kFprop, Recipe::kBf16, Mode::kAutocast),
            Item(2, Pass::kFprop, Recipe::kBf16, Mode::kPrequant),
            Item(3, Pass::kFprop, Recipe::kFp8Current, Mode::kPrequant),
            Item(4, Pass::kFprop, Recipe::kFp8Delayed, Mode::kPrequant),
            Item(5, Pass::kFprop, Recipe::kFp8Current, Mode::kAutocast)};
  }
};

TEST_F(CudaGroupTest, IdenticalWorkIsMeasuredOnce) {
  auto r = runner_->MeasureGroup(Request(Fprop5(), Fixed(12)));
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->outcomes.size(), 5u);
  for (size_t i = 0; i < 5; ++i) {
    const auto& o = r->outcomes[i];
    ASSERT_TRUE(o.status.ok()) << i << ": " << o.status;
    ASSERT_TRUE(o.measurement.has_value()) << i;
    const core::Measurement& m = *o.measurement;
    EXPECT_EQ(o.item_id, 101 + static_cast<int64_t>(i));
    EXPECT_EQ(m.verification, core::Verification::kPassed) << i << " " << m.rel_error;
    EXPECT_EQ(m.group_uid, "test/group");
    EXPECT_EQ(m.group_members, 3) << "bf16 ac = bf16 pq; fp8-current pq = fp8-delayed pq";
    EXPECT_EQ(m.round_ms.size(), 12u);
    EXPECT_EQ(m.b2b_round_ms.size(), 12u);
    EXPECT_EQ(m.isolated.rounds, 12);
    EXPECT_TRUE(m.b2b.present());
    EXPECT_GE(m.b2b_count, 2);
    EXPECT_EQ(m.time.count, 12) << "fixed rounds take one sample per visit";
    EXPECT_EQ(m.stop_reason, "fixed 12 rounds");
    EXPECT_GT(m.copy_bytes_per_s, 0) << "BeginJob ran in SetUp? copy bandwidth missing";
  }
  EXPECT_EQ(r->outcomes[0].measurement->shared_with_item, 0);
  EXPECT_EQ(r->outcomes[1].measurement->shared_with_item, 101) << "item ids are 100 + seq";
  EXPECT_THAT(r->outcomes[1].measurement->notes, HasSubstr("same GPU work as bf16 autocast"));
  EXPECT_EQ(r->outcomes[3].measurement->shared_with_item, 103);
  EXPECT_EQ(r->outcomes[1].measurement->round_ms, r->outcomes[0].measurement->round_ms);
  const core::Measurement& ac = *r->outcomes[4].measurement;
  EXPECT_EQ(ac.quant_round_ms.size(), 12u);
  EXPECT_GT(ac.quant_ms, 0);
  EXPECT_GT(ac.quant_bytes, 0);
  EXPECT_EQ(r->outcomes[2].measurement->quant_bytes, 0);
  EXPECT_NE(ac.work_key, r->outcomes[2].measurement->work_key);
}

TEST_F(CudaGroupTest, SharingCanBeTurnedOff) {
  core::GroupRequest req = Request(Fprop5(), Fixed(6));
  req.share_identical_work = false;
  auto r = runner_->MeasureGroup(req);
  ASSERT_TRUE(r.ok()) << r.status();
  for (const auto& o : r->outcomes) {
    ASSERT_TRUE(o.measurement.has_value());
    EXPECT_EQ(o.measurement->group_members, 5);
    EXPECT_EQ(o.measurement->shared_with_item, 0);
  }
}

TEST_F(CudaGroupTest, NoiseAwareRoundsStopAndSayWhy) {
  core::TimingOptions t = Fixed(0);
  t.precision_target = 0.02;
  t.item_budget_s = 0.5;
  auto r = runner_->MeasureGroup(Request(Fprop5(), t));
  ASSERT_TRUE(r.ok()) << r.status();
  const core::Measurement& m = *r->outcomes[0].measurement;
  EXPECT_GE(m.isolated.rounds, 10);
  EXPECT_THAT(m.stop_reason, ::testing::AnyOf(HasSubstr("precision"), HasSubstr("budget")));
  if (m.stop_reason.find("precision") != std::string::npos) {
    for (const auto& o : r->outcomes) EXPECT_LE(o.measurement->isolated.RelHalfWidth(), 0.02);
  }
  EXPECT_EQ(r->rounds, m.isolated.rounds);
  std::printf("noise-aware: %d rounds, %s, bf16 %.4f ms +-%.2f%%, b2b %.4f ms (N=%d)\n",
              m.isolated.rounds, m.stop_reason.c_str(), m.isolated.center_ms,
              100 * m.isolated.RelHalfWidth(), m.b2b.center_ms, m.b2b_count);
}

TEST_F(CudaGroupTest, ARefusedMemberLeavesTheOthersMeasured) {
  std::vector<core::WorkItem> items = {Item(1, Pass::kFprop, Recipe::kBf16, Mode::kPrequant),
                                       Item(2, Pass::kFprop, Recipe::kNvfp4, Mode::kPrequant)};
  auto r = runner_->MeasureGroup(Request(items, Fixed(5)));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->outcomes[0].measurement.has_value());
  if (runner_->Info().sm < 100) {
    EXPECT_TRUE(absl::IsFailedPrecondition(r->outcomes[1].status)) << r->outcomes[1].status;
    EXPECT_THAT(r->outcomes[1].status.message(), HasSubstr("sm_100"));
    EXPECT_EQ(r->outcomes[0].measurement->group_members, 1);
  }
}

TEST_F(CudaGroupTest, BackToBackCountIsHonoured) {
  core::TimingOptions t = Fixed(4);
  t.b2b_count = 7;
  auto r = runner_->MeasureGroup(
      Request({Item(1, Pass::kFprop, Recipe::kBf16, Mode::kPrequant, 64, 4096, 4096)}, t));
  ASSERT_TRUE(r.ok()) << r.status();
  const core::Measurement& m = *r->outcomes[0].measurement;
  EXPECT_EQ(m.b2b_count, 7);
  // Per GEMM, back to back cannot be slower than a third of isolated or more than isolated
  // by far: a wrong divisor (7x off) fails this.
  EXPECT_GT(m.b2b.center_ms, m.isolated.center_ms / 3);
  EXPECT_LT(m.b2b.center_ms, m.isolated.center_ms * 1.5);
}

TEST_F(CudaGroupTest, ABatchOfShapesSharesItsRoundsAndKeepsEachShapesOperands) {
  // Two shapes of different sizes (and one pass of each): sources, outputs and back to
  // back sized per shape, one set of rounds.
  std::vector<core::WorkItem> items = {
      Item(1, Pass::kFprop, Recipe::kBf16, Mode::kAutocast),
      Item(2, Pass::kFprop, Recipe::kFp8Current, Mode::kAutocast),
      Item(3, Pass::kDgrad, Recipe::kBf16, Mode::kAutocast, 256, 512, 768),
      Item(4, Pass::kDgrad, Recipe::kFp8Current, Mode::kPrequant, 256, 512, 768)};
  core::TimingOptions t = Fixed(0);
  t.precision_target = 0.05;
  t.item_budget_s = 0.5;
  auto r = runner_->MeasureGroup(Request(items, t));
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->outcomes.size(), 4u);
  size_t rounds = 0;
  for (size_t i = 0; i < 4; ++i) {
    const auto& o = r->outcomes[i];
    ASSERT_TRUE(o.measurement.has_value()) << i << ": " << o.status;
    const core::Measurement& m = *o.measurement;
    EXPECT_EQ(m.verification, core::Verification::kPassed) << i << " " << m.rel_error;
    EXPECT_EQ(m.group_uid, "test/group");
    EXPECT_EQ(m.group_members, 2) << "members of its own group";
    EXPECT_EQ(m.flops, items[i].op.Flops());
    if (i == 0) rounds = m.round_ms.size();
    EXPECT_EQ(m.round_ms.size(), rounds) << "one set of rounds";
  }
  const core::Measurement& large = *r->outcomes[0].measurement;
  const core::Measurement& small = *r->outcomes[2].measurement;
  EXPECT_GT(large.isolated.center_ms, small.isolated.center_ms);
  EXPECT_GE(small.b2b_count, large.b2b_count) << "back to back sized by each shape";
  EXPECT_EQ(r->outcomes[3].measurement->b2b_count, small.b2b_count);
}

TEST_F(CudaGroupTest, EqualWorkInTwoGroupsOfABatchIsMeasuredOncePerGroup) {
  // A square layer: fprop and dgrad of the same M x K x N are the same GPU work for
  // bf16, but each group's comparisons keep their own member.
  std::vector<core::WorkItem> items = {
      Item(1, Pass::kFprop, Recipe::kBf16, Mode::kAutocast, 512, 1024, 1024),
      Item(2, Pass::kFprop, Recipe::kFp8Current, Mode::kPrequant, 512, 1024, 1024),
      Item(3, Pass::kDgrad, Recipe::kBf16, Mode::kAutocast, 512, 1024, 1024),
      Item(4, Pass::kDgrad, Recipe::kBf16, Mode::kPrequant, 512, 1024, 1024),
      Item(5, Pass::kDgrad, Recipe::kFp8Current, Mode::kPrequant, 512, 1024, 1024)};
  auto r = runner_->MeasureGroup(Request(items, Fixed(8)));
  ASSERT_TRUE(r.ok()) << r.status();
  for (const auto& o : r->outcomes) ASSERT_TRUE(o.measurement.has_value()) << o.status;
  EXPECT_EQ(r->outcomes[2].measurement->shared_with_item, 0) << "not shared across groups";
  EXPECT_EQ(r->outcomes[3].measurement->shared_with_item, 103) << "shared inside its group";
  EXPECT_EQ(r->outcomes[0].measurement->group_members, 2);
  EXPECT_EQ(r->outcomes[4].measurement->group_members, 2);
  EXPECT_EQ(r->outcomes[2].measurement->b2b_round_ms.size(),
            r->outcomes[4].measurement->b2b_round_ms.size());
}

TEST(WorkKeyTest, SaysWhatIsTheSameWork) {
  core::TimingOptions t;
  auto item = [](Pass pass, Recipe recipe, Mode mode) {
    core::WorkItem w;
    w.op.pass = pass;
    w.op.shape = {256, 512, 384};
    w.recipe = recipe;
    w.mode = mode;
    return w;
  };
  auto key = [&](Pass p, Recipe r, Mode m) { return WorkKey(item(p, r, m), t); };
  for (Pass p : {Pass::kFprop, Pass::kDgrad, Pass::kWgrad}) {
    EXPECT_EQ(key(p, Recipe::kBf16, Mode::kAutocast), key(p, Recipe::kBf16, Mode::kPrequant));
    EXPECT_EQ(key(p, Recipe::kFp8Current, Mode::kPrequant),
              key(p, Recipe::kFp8Delayed, Mode::kPrequant));
    EXPECT_NE(key(p, Recipe::kFp8Current, Mode::kPrequant),
              key(p, Recipe::kFp8Block, Mode::kPrequant));
    EXPECT_NE(key(p, Recipe::kBf16, Mode::kPrequant), key(p, Recipe::kFp8Current, Mode::kPrequant));
  }
  // A training step's wgrad quantizes nothing new: autocast is the prequant GEMM.
  EXPECT_EQ(key(Pass::kWgrad, Recipe::kFp8Current, Mode::kAutocast),
            key(Pass::kWgrad, Recipe::kFp8Delayed, Mode::kPrequant));
  EXPECT_NE(key(Pass::kFprop, Recipe::kFp8Current, Mode::kAutocast),
            key(Pass::kFprop, Recipe::kFp8Current, Mode::kPrequant));
  EXPECT_NE(key(Pass::kFprop, Recipe::kFp8Current, Mode::kAutocast),
            key(Pass::kFprop, Recipe::kFp8Delayed, Mode::kAutocast));
  core::TimingOptions per_gemm = t;
  per_gemm.accounting = core::Accounting::kPerGemm;
  EXPECT_NE(WorkKey(item(Pass::kWgrad, Recipe::kFp8Current, Mode::kAutocast), per_gemm),
            WorkKey(item(Pass::kWgrad, Recipe::kFp8Current, Mode::kPrequant), per_gemm));
  core::TimingOptions cold = t;
  cold.l2 = core::L2Policy::kCold;
  EXPECT_NE(WorkKey(item(Pass::kFprop, Recipe::kBf16, Mode::kPrequant), cold),
            key(Pass::kFprop, Recipe::kBf16, Mode::kPrequant));
  // Fast accumulation differs by pass for FP8 (TE's defaults): fprop fast, dgrad split.
  core::WorkItem dgrad_as_fprop = item(Pass::kDgrad, Recipe::kFp8Current, Mode::kPrequant);
  EXPECT_THAT(WorkKey(dgrad_as_fprop, t), HasSubstr("accum=split"));
}

TEST(WorkKeyTest, NamesRoutedTokensAndTheMaskedLayout) {
  const core::TimingOptions t;
  core::WorkItem w;
  w.op.shape = {8, 512, 384};
  w.op.groups = 3;
  const std::string uniform = WorkKey(w, t);
  EXPECT_THAT(uniform, StartsWith("gemm 8x512x384 g3 a="));
  EXPECT_THAT(uniform, Not(HasSubstr("tokens=")));
  EXPECT_THAT(uniform, Not(HasSubstr("layout=")));
  w.op.group_tokens = {3, 0, 5};
  const std::string contiguous = WorkKey(w, t);
  EXPECT_THAT(contiguous, HasSubstr(" tokens=3,0,5"));
  EXPECT_THAT(contiguous, Not(HasSubstr("layout=")));
  w.op.layout = core::MoeLayout::kMasked;
  const std::string masked = WorkKey(w, t);
  EXPECT_THAT(masked, HasSubstr(" tokens=3,0,5 layout=masked;"));
  w.op.group_tokens = {5, 0, 3};
  EXPECT_NE(WorkKey(w, t), masked);
  EXPECT_NE(contiguous, uniform);
  // A dense GEMM has no layout.
  core::WorkItem dense;
  dense.op.shape = {8, 512, 384};
  const std::string dense_key = WorkKey(dense, t);
  dense.op.layout = core::MoeLayout::kMasked;
  EXPECT_EQ(WorkKey(dense, t), dense_key);
}

}  // namespace
}  // namespace gemmprof::kernels
