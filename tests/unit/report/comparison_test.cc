// compare's analysis on two synthetic jobs with known ratios and noise.
#include "report/comparison.h"

#include <gtest/gtest.h>

#include <cmath>

#include "tests/unit/report/compare_fixtures.h"
#include "tests/unit/report/rounds_fixtures.h"

namespace gemmprof::report {
namespace {

using core::Mode;
using core::Recipe;
using testing::CompareItem;
using testing::CompareJobs;
using testing::RoundsItem;
using testing::SetTelemetry;

TEST(NoiseThresholdTest, FloorAndCombinedHalfSpreads) {
  core::SampleStats quiet{100, 1.0, 1.0, 0.999, 1.001, 0.99, 1.01, 0.001};
  EXPECT_NEAR(RelativeHalfSpread(quiet), 0.001, 1e-12);
  EXPECT_DOUBLE_EQ(NoiseThreshold(quiet, quiet), kMinRelativeChange);
  core::SampleStats wide = quiet;  // half-spread (1.04 - 0.96) / 2 = 4%
  wide.p20_ms = 0.96;
  wide.p80_ms = 1.04;
  EXPECT_NEAR(NoiseThreshold(quiet, wide), 3 * std::sqrt(0.001 * 0.001 + 0.04 * 0.04), 1e-12);
  EXPECT_NEAR(NoiseThreshold(wide, wide), 3 * std::sqrt(2.0) * 0.04, 1e-12);
  // The stdev plays no part: outliers that triple it leave the threshold alone.
  core::SampleStats outliers = quiet;
  outliers.stdev_ms = 0.2;
  EXPECT_DOUBLE_EQ(NoiseThreshold(outliers, outliers), kMinRelativeChange);
  core::SampleStats empty;
  EXPECT_DOUBLE_EQ(RelativeHalfSpread(empty), 0);
  EXPECT_EQ(Judge(1.0, 1.05, 0.02), Verdict::kSlower);
  EXPECT_EQ(Judge(1.0, 0.95, 0.02), Verdict::kFaster);
  EXPECT_EQ(Judge(1.0, 1.019, 0.02), Verdict::kSame);
}

TEST(CompareReportsTest, RatiosAndVerdictsAccountForNoise) {
  const auto [a, b] = CompareJobs();
  const Comparison c = CompareReports(a, b);
  ASSERT_EQ(c.items.size(), 5u);
  const Verdict expected[] = {Verdict::kSlower, Verdict::kFaster, Verdict::kSame, Verdict::kSame,
                              Verdict::kSlower};
  const double ratios[] = {1.10, 0.90, 1.01, 1.03, 1.10};
  const double thresholds[] = {3 * std::sqrt(2.0) * 0.005, 3 * std::sqrt(2.0) * 0.005,
                               3 * std::sqrt(2.0) * 0.005, 3 * std::sqrt(2.0) * 0.015,
                               3 * std::sqrt(2.0) * 0.005};
  for (size_t i = 0; i < 5; ++i) {
    EXPECT_NEAR(c.items[i].ratio, ratios[i], 1e-12) << c.items[i].op.name;
    EXPECT_NEAR(c.items[i].threshold, thresholds[i], 1e-12) << c.items[i].op.name;
    EXPECT_EQ(c.items[i].verdict, expected[i]) << c.items[i].op.name;
  }
  EXPECT_EQ(c.faster, 1);
  EXPECT_EQ(c.slower, 2);
  EXPECT_EQ(c.same, 2);
  ASSERT_EQ(c.only_in_a.size(), 1u);
  EXPECT_NE(c.only_in_a[0].label.find("only_a"), std::string::npos);
  EXPECT_TRUE(c.only_in_b.empty());
  ASSERT_EQ(c.context_diffs.size(), 1u);
  EXPECT_EQ(c.context_diffs[0], "cuBLASLt: 13.0.2 -> 13.1.0");
  // bf16 is complete in both: per-layer ratio (1.1 + 0.9 + 1.01 + 1.03 + 1.1) / 5.
  ASSERT_EQ(c.layers.size(), 1u);
  EXPECT_NEAR(c.layers[0].ratio, (1.10 + 0.90 + 1.01 + 1.03 + 1.10) / 5.0, 1e-12);
}

TEST(CompareReportsTest, MatchesOnModeAndGroupsToo) {
  auto [a, b] = CompareJobs();
  for (auto& item : b.items) item.item.mode = Mode::kPrequant;
  EXPECT_TRUE(CompareReports(a, b).items.empty());
  auto [c, d] = CompareJobs();
  for (auto& item : d.items) item.item.op.groups = 8;
  EXPECT_TRUE(CompareReports(c, d).items.empty());
}

// With --split-gate-up, mlp_gate and mlp_up share shape, pass and groups: each must meet
// its own counterpart, and nothing is left unmatched.
TEST(CompareTest, OpsSharingAShapeMatchByName) {
  core::Report a, b;
  a.job.id = 1;
  b.job.id = 2;
  const core::GemmShape s{4096, 4096, 14336};
  a.items = {CompareItem("mlp_gate", s, Recipe::kBf16, 1.0, 0.005, 0.005),
             CompareItem("mlp_up", s, Recipe::kBf16, 2.0, 0.005, 0.005)};
  b.items = {CompareItem("mlp_gate", s, Recipe::kBf16, 1.0, 0.005, 0.005),
             CompareItem("mlp_up", s, Recipe::kBf16, 2.0, 0.005, 0.005)};
  const Comparison c = CompareReports(a, b);
  ASSERT_EQ(c.items.size(), 2u);
  for (const ItemComparison& item : c.items) {
    EXPECT_DOUBLE_EQ(item.ratio, 1.0);
    EXPECT_EQ(item.verdict, Verdict::kSame);
  }
  EXPECT_TRUE(c.only_in_a.empty());
  EXPECT_TRUE(c.only_in_b.empty());
}

ItemComparison CompareOne(const core::ItemRecord& a, const core::ItemRecord& b) {
  core::Report ra, rb;
  ra.items.push_back(a);
  rb.items.push_back(b);
  const Comparison c = CompareReports(ra, rb);
  EXPECT_EQ(c.items.size(), 1u);
  return c.items.empty() ? ItemComparison{} : c.items.front();
}

TEST(CompareRoundsTest, VerdictNeedsTheIntervalToExcludeOneAndTheFloor) {
  // 5% slower with +-0.3% on each side: the interval excludes 1, above the 2% floor.
  ItemComparison c = CompareOne(RoundsItem("x", 1.0, 0.003), RoundsItem("x", 1.05, 0.003));
  EXPECT_TRUE(c.ratio_ci.valid);
  EXPECT_GT(c.ratio_ci.low, 1);
  EXPECT_DOUBLE_EQ(c.a_ms, 1.0);
  EXPECT_DOUBLE_EQ(c.b_ms, 1.05);
  EXPECT_EQ(c.verdict, Verdict::kSlower);
  // 1.5% faster, interval tight enough to exclude 1: below the floor, so "same".
  c = CompareOne(RoundsItem("x", 1.0, 0.002), RoundsItem("x", 0.985, 0.002));
  EXPECT_LT(c.ratio_ci.high, 1);
  EXPECT_EQ(c.verdict, Verdict::kSame);
  // 5% faster but each side +-6%: the interval holds 1, so "same".
  c = CompareOne(RoundsItem("x", 1.0, 0.06), RoundsItem("x", 0.95, 0.06));
  EXPECT_TRUE(c.ratio_ci.Contains(1));
  EXPECT_EQ(c.verdict, Verdict::kSame);
  // 10% faster, tight: faster.
  c = CompareOne(RoundsItem("x", 1.0, 0.005), RoundsItem("x", 0.9, 0.005));
  EXPECT_EQ(c.verdict, Verdict::kFaster);
}

TEST(CompareRoundsTest, OldResultsOnEitherSideFallBackToTheNoiseThreshold) {
  const core::ItemRecord old_a =
      CompareItem("x", {1024, 1024, 1024}, Recipe::kBf16, 1.0, 0.005, 0.005);
  const core::ItemRecord new_b = RoundsItem("x", 1.10, 0.003);
  const ItemComparison c = CompareOne(old_a, new_b);
  EXPECT_FALSE(c.ratio_ci.valid);
  EXPECT_DOUBLE_EQ(c.b_ms, 1.10);  // B's headline is its rounds' mean
  EXPECT_DOUBLE_EQ(c.threshold, NoiseThreshold(old_a.result->time, new_b.result->time));
  EXPECT_EQ(c.verdict, Verdict::kSlower);
}

TEST(CompareRoundsTest, BackToBackIsComparedToo) {
  const ItemComparison c =
      CompareOne(RoundsItem("x", 1.0, 0.003, 0.9), RoundsItem("x", 1.0, 0.003, 0.8));
  EXPECT_DOUBLE_EQ(c.b2b_a_ms, 0.9);
  EXPECT_DOUBLE_EQ(c.b2b_b_ms, 0.8);
  EXPECT_NEAR(c.b2b_ratio_ci.center, 0.8 / 0.9, 1e-12);
  EXPECT_EQ(c.b2b_verdict, Verdict::kFaster);
  EXPECT_EQ(c.verdict, Verdict::kSame);
  // Without b2b on one side: nothing compared.
  const ItemComparison d =
      CompareOne(RoundsItem("x", 1.0, 0.003, 0.9), RoundsItem("x", 1.0, 0.003));
  EXPECT_EQ(d.b2b_a_ms, 0);
  EXPECT_FALSE(d.b2b_ratio_ci.valid);
}

void SetEnergy(core::ItemRecord& item, double joules, double half) {
  testing::SetEnergy(*item.result, joules, half);
}

TEST(CompareEnergyTest, JoulesComparedWithTheirIntervalsWhenBothSidesMeasuredThem) {
  core::ItemRecord a = RoundsItem("x", 1.0, 0.003), b = RoundsItem("x", 1.0, 0.003);
  SetEnergy(a, 0.60, 0.005);
  SetEnergy(b, 0.54, 0.005);
  ItemComparison c = CompareOne(a, b);
  ASSERT_TRUE(c.has_energy());
  EXPECT_DOUBLE_EQ(c.a_joules, 0.60);
  EXPECT_DOUBLE_EQ(c.b_joules, 0.54);
  EXPECT_NEAR(c.energy_ratio_ci.center, 0.9, 1e-12);
  EXPECT_TRUE(c.energy_ratio_ci.valid);
  EXPECT_LT(c.energy_ratio_ci.high, 1);
  EXPECT_EQ(c.energy_verdict, Verdict::kFaster);  // less energy: B is better
  EXPECT_EQ(c.verdict, Verdict::kSame);           // time unchanged
  // Wide windows: the interval holds 1, so "same".
  SetEnergy(b, 0.57, 0.08);
  c = CompareOne(a, b);
  EXPECT_TRUE(c.energy_ratio_ci.Contains(1));
  EXPECT_EQ(c.energy_verdict, Verdict::kSame);
  // One side without a figure (not asked, or "energy not measured"): nothing compared.
  core::ItemRecord none = RoundsItem("x", 1.0, 0.003);
  none.result->energy.not_measured = "no energy counter on this board";
  c = CompareOne(a, none);
  EXPECT_FALSE(c.has_energy());
  EXPECT_FALSE(c.energy_ratio_ci.valid);
}

TEST(CompareConditionsTest, BothJobsRunningStateOverTheMatchedItems) {
  auto [a, b] = CompareJobs();
  // Items 0-3 carry telemetry on both sides; item 4 only in A (left out of both).
  for (int i = 0; i < 4; ++i) {
    SetTelemetry(a.items[i], 1400 + i, 1300, 690, 68 + i, 50, 100);
    SetTelemetry(b.items[i], 1379 + i, 1290, 692, 70 + i, 100, 100);
  }
  SetTelemetry(a.items[4], 1900, 1900, 300, 40, 0, 100);
  const Comparison c = CompareReports(a, b);
  EXPECT_EQ(c.conditions_a.items, 4);
  EXPECT_EQ(c.conditions_b.items, 4);
  EXPECT_DOUBLE_EQ(c.conditions_a.sm_clock_mhz, 1401.5);  // median of 1400..1403
  EXPECT_DOUBLE_EQ(c.conditions_b.sm_clock_mhz, 1380.5);
  EXPECT_DOUBLE_EQ(c.conditions_a.sm_clock_min_mhz, 1300);
  EXPECT_DOUBLE_EQ(c.conditions_a.temp_c, 69.5);
  EXPECT_DOUBLE_EQ(c.conditions_b.power_w, 692);
  EXPECT_DOUBLE_EQ(c.conditions_a.throttled_share, 0.5);
  EXPECT_DOUBLE_EQ(c.conditions_b.throttled_share, 1.0);
}

TEST(CompareConditionsTest, NoTelemetryNoConditionsAndTheMidrangeStandsInForTheMean) {
  const auto [oa, ob] = CompareJobs();
  EXPECT_EQ(CompareReports(oa, ob).conditions_a.items, 0);
  // A recorded mean of 0 (results before it was stored): the midrange stands in.
  auto [ma, mb] = CompareJobs();
  SetTelemetry(ma.items[0], 0, 1300, 690, 68, 0, 100);
  SetTelemetry(mb.items[0], 0, 1300, 690, 68, 0, 100);
  ma.items[0].result->telemetry.sm_clock_mhz_max = 1500;
  EXPECT_DOUBLE_EQ(CompareReports(ma, mb).conditions_a.sm_clock_mhz, 1400);
}

}  // namespace
}  // namespace gemmprof::report
