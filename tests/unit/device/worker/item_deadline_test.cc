#include "device/worker/item_deadline.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

namespace gemmprof::worker {
namespace {

core::WorkItem Item(int64_t m, int64_t k, int64_t n, int64_t groups = 1) {
  core::WorkItem item;
  item.op.shape = {m, k, n};
  item.op.groups = groups;
  return item;
}

TEST(ItemDeadlineTest, ConfiguredValuesWin) {
  core::TimingOptions t;
  EXPECT_EQ(ItemTimeoutSeconds(Item(64, 64, 64), t, false, 1.5), 1.5);
  EXPECT_EQ(ItemTimeoutSeconds(Item(1 << 16, 1 << 16, 1 << 16), t, true, 2), 2);
  EXPECT_EQ(BeginJobTimeoutSeconds(t, 5), t.gpu_warmup_s + 5);
}

TEST(ItemDeadlineTest, DerivedBoundsAreNeverBelowAMinute) {
  core::TimingOptions t;
  EXPECT_EQ(ItemTimeoutSeconds(Item(64, 64, 64), t, false, 0), kMinDerivedTimeoutS);
  EXPECT_EQ(ItemTimeoutSeconds(Item(64, 64, 64), t, true, 0), kMinDerivedTimeoutS);
  EXPECT_EQ(BeginJobTimeoutSeconds(t, 0), t.gpu_warmup_s + kMinDerivedTimeoutS);
}

TEST(ItemDeadlineTest, DerivedBoundsGrowWithWorkAndStayGenerous) {
  core::TimingOptions t;
  t.warmup_iters = 10;
  t.timed_iters = 100;
  // An LM head of 28 TFLOP per call: an H100 needs ~0.05 s per iteration, ~10 s in all.
  const core::WorkItem lm_head = Item(16384, 16384, 53248);
  const double gpu = ItemTimeoutSeconds(lm_head, t, false, 0);
  EXPECT_GT(gpu, 100);
  EXPECT_LT(gpu, 3600);
  core::TimingOptions more = t;
  more.timed_iters = 1000;
  EXPECT_GT(ItemTimeoutSeconds(lm_head, more, false, 0), gpu);
  more = t;
  more.autotune_k = 8;
  EXPECT_GT(ItemTimeoutSeconds(lm_head, more, false, 0), gpu);
  EXPECT_GT(ItemTimeoutSeconds(Item(16384, 16384, 53248, 8), t, false, 0), gpu);
  // The host reference's largest item (2^28 multiply-adds) gets well over a minute.
  EXPECT_GT(ItemTimeoutSeconds(Item(1024, 512, 512), t, true, 0), kMinDerivedTimeoutS);
}

TEST(ItemDeadlineTest, AGroupGetsItsItemsBoundsPlusSlack) {
  core::TimingOptions fixed;
  fixed.timed_iters = 100;
  const std::vector<core::WorkItem> items = {Item(16384, 16384, 53248), Item(64, 64, 64)};
  const double sum =
      ItemTimeoutSeconds(items[0], fixed, false, 0) + ItemTimeoutSeconds(items[1], fixed, false, 0);
  EXPECT_DOUBLE_EQ(GroupTimeoutSeconds(items, fixed, false, 0), sum + kGroupSlackS);
  EXPECT_DOUBLE_EQ(GroupTimeoutSeconds(items, fixed, true, 2), 2 * 2 + kGroupSlackS);
  EXPECT_DOUBLE_EQ(GroupTimeoutSeconds({}, fixed, false, 0), kGroupSlackS);
}

TEST(ItemDeadlineTest, ANoiseAwareGroupAlsoGetsItsRoundsBudget) {
  core::TimingOptions noise_aware;
  noise_aware.timed_iters = 0;
  noise_aware.item_budget_s = 30;
  const std::vector<core::WorkItem> items(3, Item(64, 64, 64));
  const double per_item = ItemTimeoutSeconds(items[0], noise_aware, false, 0);
  EXPECT_DOUBLE_EQ(GroupTimeoutSeconds(items, noise_aware, false, 0),
                   3 * (per_item + 30) + kGroupSlackS);
  EXPECT_DOUBLE_EQ(GroupTimeoutSeconds(items, noise_aware, false, 0.5),
                   3 * (0.5 + 30) + kGroupSlackS);
  core::TimingOptions fixed = noise_aware;
  fixed.timed_iters = 5;
  EXPECT_DOUBLE_EQ(GroupTimeoutSeconds(items, fixed, false, 0.5), 3 * 0.5 + kGroupSlackS)
      << "fixed rounds have no budget";
}

TEST(ItemDeadlineTest, TheFlagTakesSecondsInRange) {
  EXPECT_TRUE(ValidateItemTimeout(0).ok());
  EXPECT_TRUE(ValidateItemTimeout(0.5).ok());
  EXPECT_TRUE(ValidateItemTimeout(kMaxItemTimeoutS).ok());
  for (double bad : {-1.0, -0.001, kMaxItemTimeoutS + 1, std::numeric_limits<double>::infinity(),
                     std::nan("")}) {
    absl::Status s = ValidateItemTimeout(bad);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << bad;
    EXPECT_NE(std::string(s.message()).find("--item-timeout"), std::string::npos);
    EXPECT_NE(std::string(s.message()).find("[0, 604800]"), std::string::npos) << s.message();
  }
}

TEST(ItemDeadlineTest, NoProgressBoundsAreTenSecondsOrMoreForHeavySetUps) {
  core::TimingOptions t;
  EXPECT_EQ(SetupStepSeconds({Item(64, 64, 64)}, t, false), kMinNoProgressS);
  EXPECT_EQ(SetupStepSeconds({Item(64, 64, 64)}, t, true), kMinNoProgressS);
  // The heaviest item decides: an 8192-cube set-up at a pessimistic 20 TFLOP/s.
  const double heavy = SetupStepSeconds({Item(64, 64, 64), Item(8192, 8192, 8192)}, t, false);
  EXPECT_GT(heavy, 20);
  EXPECT_LT(heavy, 120);
  // After the first round: 20 x the slowest round step, never below 10 s.
  EXPECT_EQ(NoProgressSeconds(0, 33), 33);
  EXPECT_EQ(NoProgressSeconds(100, 33), kMinNoProgressS);
  EXPECT_EQ(NoProgressSeconds(1500, 33), 30);
  EXPECT_EQ(NoProgressSeconds(1510, 33), 31) << "whole seconds, rounded up";
  EXPECT_EQ(heavy, std::ceil(heavy));
}

TEST(ItemDeadlineTest, SecondsPrintShort) {
  EXPECT_EQ(FormatSeconds(60), "60");
  EXPECT_EQ(FormatSeconds(1.5), "1.5");
  EXPECT_EQ(FormatSeconds(0.25), "0.25");
}

}  // namespace
}  // namespace gemmprof::worker
