// HostRunner::MeasureGroup: work keys, sharing, outcome order, refusals within a group,
// fixed rounds and the figures every round fills.
#include <string>
#include <vector>

#include "device/host/host_runner.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace gemmprof::device {
namespace {

using core::Mode;
using core::Pass;
using core::Recipe;
using ::testing::HasSubstr;
using ::testing::StartsWith;

core::WorkItem Item(int32_t seq, Recipe recipe, Mode mode, Pass pass = Pass::kFprop) {
  core::WorkItem item;
  item.id = 100 + seq;
  item.seq = seq;
  item.op.shape = {24, 40, 32};
  item.op.pass = pass;
  item.recipe = recipe;
  item.mode = mode;
  return item;
}

core::GroupRequest Request(std::vector<core::WorkItem> items, int32_t rounds = 3) {
  core::GroupRequest request;
  request.group_uid = "host/j1/s1/1700000000000";
  request.items = std::move(items);
  request.timing.warmup_iters = 1;
  request.timing.timed_iters = rounds;
  request.timing.amax_history_len = 4;
  return request;
}

TEST(HostWorkKey, EqualExactlyWhereTheHostComputesTheSame) {
  const core::TimingOptions t;
  const auto key = [&](Recipe r, Mode m, Pass p = Pass::kFprop) {
    return HostWorkKey(Item(1, r, m, p), t);
  };
  EXPECT_EQ(key(Recipe::kBf16, Mode::kAutocast), key(Recipe::kBf16, Mode::kPrequant));
  EXPECT_NE(key(Recipe::kFp8Current, Mode::kAutocast), key(Recipe::kFp8Current, Mode::kPrequant));
  // The host's delayed history is not seeded with the current amax: other scales.
  EXPECT_NE(key(Recipe::kFp8Current, Mode::kPrequant), key(Recipe::kFp8Delayed, Mode::kPrequant));
  EXPECT_NE(key(Recipe::kFp8Block, Mode::kPrequant), key(Recipe::kMxfp8, Mode::kPrequant));
  EXPECT_NE(key(Recipe::kFp8Current, Mode::kPrequant, Pass::kFprop),
            key(Recipe::kFp8Current, Mode::kPrequant, Pass::kDgrad))
      << "dgrad's A is a gradient (E5M2)";
  EXPECT_EQ(key(Recipe::kBf16, Mode::kAutocast, Pass::kFprop),
            key(Recipe::kBf16, Mode::kPrequant, Pass::kWgrad))
      << "bf16 operands do not depend on their roles";
  core::TimingOptions other = t;
  other.amax_algo = core::AmaxAlgo::kMostRecent;
  EXPECT_NE(HostWorkKey(Item(1, Recipe::kFp8Delayed, Mode::kPrequant), t),
            HostWorkKey(Item(1, Recipe::kFp8Delayed, Mode::kPrequant), other));
  EXPECT_EQ(HostWorkKey(Item(1, Recipe::kFp8Current, Mode::kPrequant), t),
            HostWorkKey(Item(1, Recipe::kFp8Current, Mode::kPrequant), other))
      << "current scaling has no history";
  other = t;
  other.seed += 1;
  EXPECT_NE(key(Recipe::kBf16, Mode::kAutocast),
            HostWorkKey(Item(1, Recipe::kBf16, Mode::kAutocast), other));
  EXPECT_EQ(HostWorkKey(Item(1, Recipe::kNvfp4, Mode::kAutocast), t),
            HostWorkKey(Item(7, Recipe::kNvfp4, Mode::kAutocast), t))
      << "ids and seqs are not work";
}

TEST(HostRunnerGroup, Bf16AutocastAndPrequantShareOneMeasurement) {
  HostRunner runner;
  ASSERT_TRUE(runner.BeginJob({}).ok());
  auto result = runner.MeasureGroup(
      Request({Item(1, Recipe::kBf16, Mode::kAutocast), Item(2, Recipe::kBf16, Mode::kPrequant),
               Item(3, Recipe::kFp8Current, Mode::kAutocast)}));
  ASSERT_TRUE(result.ok()) << result.status();
  ASSERT_EQ(result->outcomes.size(), 3u);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(result->outcomes[i].item_id, 101 + i) << "same order as the request";
    ASSERT_TRUE(result->outcomes[i].status.ok()) << result->outcomes[i].status;
    ASSERT_TRUE(result->outcomes[i].measurement.has_value());
  }
  const core::Measurement& ac = *result->outcomes[0].measurement;
  const core::Measurement& pq = *result->outcomes[1].measurement;
  const core::Measurement& fp8 = *result->outcomes[2].measurement;
  EXPECT_EQ(ac.shared_with_item, 0);
  EXPECT_EQ(pq.shared_with_item, 101) << "the id of the item measured";
  EXPECT_THAT(pq.notes, StartsWith("same host work as bf16 autocast (item 1): one measurement; "));
  EXPECT_EQ(pq.round_ms, ac.round_ms);
  EXPECT_EQ(pq.b2b_round_ms, ac.b2b_round_ms);
  EXPECT_EQ(pq.work_key, ac.work_key);
  EXPECT_EQ(fp8.shared_with_item, 0);
  EXPECT_NE(fp8.work_key, ac.work_key);
  for (const core::Measurement* m : {&ac, &pq, &fp8}) {
    EXPECT_EQ(m->group_members, 2);
    EXPECT_EQ(m->group_uid, "host/j1/s1/1700000000000");
    EXPECT_GT(m->copy_bytes_per_s, 0.0) << "measured by BeginJob";
  }
}

TEST(HostRunnerGroup, WithoutSharingIdenticalWorkIsMeasuredTwice) {
  HostRunner runner;
  core::GroupRequest request =
      Request({Item(1, Recipe::kBf16, Mode::kAutocast), Item(2, Recipe::kBf16, Mode::kPrequant)});
  request.share_identical_work = false;
  auto result = runner.MeasureGroup(request);
  ASSERT_TRUE(result.ok()) << result.status();
  ASSERT_EQ(result->outcomes.size(), 2u);
  for (const core::ItemOutcome& o : result->outcomes) {
    ASSERT_TRUE(o.measurement.has_value());
    EXPECT_EQ(o.measurement->shared_with_item, 0);
    EXPECT_EQ(o.measurement->group_members, 2);
    EXPECT_THAT(o.measurement->notes, ::testing::Not(HasSubstr("same work")));
    EXPECT_EQ(o.measurement->round_ms.size(), 3u);
  }
  EXPECT_EQ(result->outcomes[0].measurement->work_key, result->outcomes[1].measurement->work_key)
      << "the key is still recorded";
}

TEST(HostRunnerGroup, ARefusedMemberComesBackInItsOutcomeAndTheOthersAreMeasured) {
  HostRunner runner;
  core::GroupRequest request = Request({Item(1, Recipe::kBf16, Mode::kAutocast),
                                        Item(2, Recipe::kFp8Delayed, Mode::kAutocast),
                                        Item(3, Recipe::kFp8Current, Mode::kPrequant)});
  request.timing.amax_history_len = 0;
  auto result = runner.MeasureGroup(request);
  ASSERT_TRUE(result.ok()) << "a refusal of one item is not the group's";
  ASSERT_EQ(result->outcomes.size(), 3u);
  EXPECT_EQ(result->outcomes[1].item_id, 102);
  EXPECT_EQ(result->outcomes[1].status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(result->outcomes[1].status.message(),
            "amax_history_len: 0 must be >= 1 for fp8-delayed");
  EXPECT_FALSE(result->outcomes[1].measurement.has_value());
  for (int i : {0, 2}) {
    ASSERT_TRUE(result->outcomes[i].measurement.has_value()) << i;
    EXPECT_EQ(result->outcomes[i].measurement->group_members, 2);
  }
}

TEST(HostRunnerGroup, RunsFixedRoundsAndFillsEveryFigure) {
  HostRunner runner;
  auto result = runner.MeasureGroup(Request({Item(1, Recipe::kFp8Current, Mode::kAutocast),
                                             Item(2, Recipe::kFp8Current, Mode::kPrequant)}));
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->rounds, 3);
  EXPECT_EQ(result->stop_reason, "host reference: fixed 3 rounds");
  const core::Measurement& ac = *result->outcomes[0].measurement;
  const core::Measurement& pq = *result->outcomes[1].measurement;
  for (const core::Measurement* m : {&ac, &pq}) {
    EXPECT_EQ(m->round_ms.size(), 3u);
    EXPECT_EQ(m->b2b_round_ms.size(), 3u);
    EXPECT_EQ(m->time.count, 3) << "old readers see a median of the rounds";
    EXPECT_TRUE(m->isolated.present());
    EXPECT_EQ(m->isolated.rounds, 3);
    EXPECT_GT(m->isolated.center_ms, 0.0);
    EXPECT_TRUE(m->b2b.present());
    EXPECT_EQ(m->b2b_count, 2);
    EXPECT_EQ(m->stop_reason, "host reference: fixed 3 rounds");
  }
  EXPECT_EQ(ac.quant_round_ms.size(), 3u);
  EXPECT_TRUE(ac.quant.present());
  EXPECT_EQ(ac.quant_ms, ac.quant.center_ms);
  // One BF16 read of A [24, 40] and B [32, 40], E4M3 writes of both and two fp32 scales.
  EXPECT_EQ(ac.quant_bytes, 2.0 * (24 * 40 + 32 * 40) + (24 * 40 + 32 * 40 + 8));
  EXPECT_TRUE(pq.quant_round_ms.empty());
  EXPECT_FALSE(pq.quant.present());
  EXPECT_EQ(pq.quant_ms, 0.0);
  EXPECT_EQ(pq.quant_bytes, 0.0);
}

TEST(HostRunnerGroup, RoundsAreCappedAndNoiseAwareRunsTheHostDefault) {
  core::TimingOptions t;
  t.timed_iters = 0;
  EXPECT_EQ(HostRounds(t), kHostDefaultRounds);
  t.timed_iters = 2;
  EXPECT_EQ(HostRounds(t), 2);
  t.timed_iters = 100;
  EXPECT_EQ(HostRounds(t), kMaxHostTimedIters);
  t.b2b_count = 0;
  EXPECT_EQ(HostB2bCount(t), 2);
  t.b2b_count = 1000;
  EXPECT_EQ(HostB2bCount(t), kMaxHostB2bCount);
  EXPECT_EQ(HostTimedIterations(t), kMaxHostTimedIters * (2 + kMaxHostB2bCount));

  HostRunner runner;
  auto result = runner.MeasureGroup(Request({Item(1, Recipe::kBf16, Mode::kPrequant)}, 0));
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->rounds, kHostDefaultRounds);
  EXPECT_EQ(result->outcomes[0].measurement->round_ms.size(), size_t{kHostDefaultRounds});
  EXPECT_EQ(result->outcomes[0].measurement->notes,
            "host reference: 5 rounds (noise-aware stopping is for GPUs)");
}

TEST(HostRunnerGroup, APassedDeadlineEndsTheRoundsAfterTheFirst) {
  HostRunner runner;
  core::GroupRequest request = Request({Item(1, Recipe::kBf16, Mode::kAutocast)}, 5);
  request.deadline_unix_ms = 1;
  auto result = runner.MeasureGroup(request);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->rounds, 1);
  EXPECT_EQ(result->stop_reason, "deadline (host reference: 1 of 5 rounds)");
  EXPECT_EQ(result->outcomes[0].measurement->round_ms.size(), 1u);
}

TEST(HostRunnerGroup, ABadRequestIsTheGroupsError) {
  HostRunner runner;
  EXPECT_EQ(runner.MeasureGroup(Request({})).status().message(),
            "items: a measurement group needs at least one item");
}

TEST(HostRunnerGroup, ABatchOfSeveralShapesIsMeasuredGroupByGroup) {
  HostRunner runner;
  core::WorkItem other = Item(2, Recipe::kBf16, Mode::kAutocast);
  other.op.shape.n = 48;
  core::GroupRequest request = Request(
      {Item(1, Recipe::kBf16, Mode::kAutocast), other, Item(3, Recipe::kBf16, Mode::kPrequant)});
  request.group_uid = "host/j1/s1/0";
  auto result = runner.MeasureGroup(request);
  ASSERT_TRUE(result.ok()) << result.status();
  ASSERT_EQ(result->outcomes.size(), 3u);
  for (const auto& out : result->outcomes) ASSERT_TRUE(out.measurement.has_value());
  // Outcomes in request order; each shape its own rounds and uid.
  EXPECT_EQ(result->outcomes[1].item_id, 102);
  EXPECT_EQ(result->outcomes[0].measurement->group_uid, "host/j1/s1/0/g0");
  EXPECT_EQ(result->outcomes[1].measurement->group_uid, "host/j1/s1/0/g1");
  EXPECT_EQ(result->outcomes[2].measurement->group_uid, "host/j1/s1/0/g0");
  EXPECT_EQ(result->outcomes[2].measurement->shared_with_item, 101) << "bf16 prequant = autocast";
  EXPECT_EQ(result->outcomes[1].measurement->flops, 2.0 * 24 * 40 * 48);
}

TEST(HostRunnerGroup, EveryItemRefusedMeasuresNothing) {
  HostRunner runner;
  core::WorkItem item = Item(1, Recipe::kBf16, Mode::kAutocast);
  item.op.shape.m = 0;
  auto result = runner.MeasureGroup(Request({item}));
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->rounds, 0);
  EXPECT_EQ(result->outcomes[0].status.message(), "shape 0x40x32: m = 0; must be >= 1");
}

}  // namespace
// Dynamic mode (inference) times the activation's quantization only: the weight's copy
// was made before the timing. The accounting shows in the bytes the timed quantization
// moves: A's BF16 read and its FP8 write with one scale per row, nothing of B.
TEST(HostRunnerGroup, DynamicTimesOnlyTheActivationsQuantization) {
  HostRunner runner;
  ASSERT_TRUE(runner.BeginJob({}).ok());
  auto result = runner.MeasureGroup(Request(
      {Item(1, Recipe::kFp8Rowwise, Mode::kDynamic), Item(2, Recipe::kFp8Rowwise, Mode::kAutocast),
       Item(3, Recipe::kFp8Rowwise, Mode::kPrequant), Item(4, Recipe::kBf16, Mode::kDynamic)}));
  ASSERT_TRUE(result.ok()) << result.status();
  ASSERT_EQ(result->outcomes.size(), 4u);
  for (const auto& o : result->outcomes) ASSERT_TRUE(o.measurement.has_value()) << o.status;
  const core::Measurement& dyn = *result->outcomes[0].measurement;
  const core::Measurement& ac = *result->outcomes[1].measurement;
  const core::Measurement& pq = *result->outcomes[2].measurement;
  const double m = 24, k = 40, n = 32;
  // A: 2 bytes read per element, 1 written, 4 per row scale.
  EXPECT_DOUBLE_EQ(dyn.quant_bytes, 2 * m * k + m * k + 4 * m);
  EXPECT_DOUBLE_EQ(ac.quant_bytes, 2 * m * k + m * k + 4 * m + 2 * n * k + n * k + 4 * n);
  EXPECT_DOUBLE_EQ(pq.quant_bytes, 0);
  EXPECT_TRUE(dyn.quant.present()) << "dynamic has a quantization figure";
  EXPECT_FALSE(pq.quant.present());
  EXPECT_THAT(dyn.work_key, HasSubstr("timed=quantize-a+gemm"));
  EXPECT_THAT(ac.work_key, HasSubstr("timed=quantize+gemm"));
  EXPECT_THAT(dyn.notes, HasSubstr("the activation X quantized inside the timing"));
  EXPECT_EQ(dyn.verification, core::Verification::kPassed) << dyn.rel_error;
  // bf16 has nothing to quantize: its dynamic item is its prequant work, labelled so.
  const core::Measurement& bf = *result->outcomes[3].measurement;
  EXPECT_DOUBLE_EQ(bf.quant_bytes, 0);
  EXPECT_THAT(bf.notes, HasSubstr("bf16 quantizes nothing"));
}

// Wgrad has no weight: dynamic quantizes both operands there, as autocast does.
TEST(HostRunnerGroup, DynamicWgradQuantizesBothOperands) {
  HostRunner runner;
  ASSERT_TRUE(runner.BeginJob({}).ok());
  auto result =
      runner.MeasureGroup(Request({Item(1, Recipe::kFp8Current, Mode::kDynamic, Pass::kWgrad),
                                   Item(2, Recipe::kFp8Current, Mode::kAutocast, Pass::kWgrad)}));
  ASSERT_TRUE(result.ok()) << result.status();
  const core::Measurement& dyn = *result->outcomes[0].measurement;
  EXPECT_THAT(dyn.work_key, HasSubstr("timed=quantize+gemm"));
  EXPECT_EQ(dyn.shared_with_item, 0);
  EXPECT_EQ(result->outcomes[1].measurement->shared_with_item, 101)
      << "the same host work, measured once";
}

}  // namespace gemmprof::device
