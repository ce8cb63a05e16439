// The stop rule: when rounds stop, and what a group's series can claim.
#include "measure/stop_rule.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "core/stats.h"

namespace gemmprof::measure {
namespace {

using core::stats::EstimateOf;
using core::stats::PairedRatio;

constexpr double kInf = std::numeric_limits<double>::infinity();

TEST(ShouldStopTest, FixedRoundsStopExactlyThere) {
  StopOptions o;
  o.fixed_rounds = 100;
  // Precision, budget and the round limit do not count in fixed mode.
  EXPECT_FALSE(ShouldStop(o, 99, 1e9, 0).stop);
  const StopDecision d = ShouldStop(o, 100, 0, kInf);
  EXPECT_TRUE(d.stop);
  EXPECT_EQ(d.reason, "fixed 100 rounds");
  o.fixed_rounds = 5000;
  EXPECT_FALSE(ShouldStop(o, 4096, 0, 0).stop);
}

TEST(ShouldStopTest, PrecisionOnlyAfterMinRounds) {
  const StopOptions o;  // target 1%, 10 rounds at least
  EXPECT_FALSE(ShouldStop(o, 9, 0.5, 0.001).stop);
  EXPECT_FALSE(ShouldStop(o, 10, 0.5, 0.0101).stop);
  const StopDecision d = ShouldStop(o, 10, 0.5, 0.008);
  EXPECT_TRUE(d.stop);
  EXPECT_EQ(d.reason, "precision \u00b10.8% reached");
  EXPECT_TRUE(ShouldStop(o, 10, 0.5, 0.01).stop);  // at the target counts
  StopOptions zero_min = o;
  zero_min.min_rounds = 0;  // an interval needs two rounds whatever the minimum
  EXPECT_FALSE(ShouldStop(zero_min, 1, 0, 0).stop);
}

TEST(ShouldStopTest, BudgetStatesWhatWasAchieved) {
  const StopOptions o;
  EXPECT_FALSE(ShouldStop(o, 50, 1.99, 0.014).stop);
  const StopDecision d = ShouldStop(o, 50, 2.0, 0.014);
  EXPECT_TRUE(d.stop);
  EXPECT_EQ(d.reason, "budget 2.0 s spent (\u00b11.4%)");
  // Before the minimum rounds the budget still ends the rounds.
  EXPECT_TRUE(ShouldStop(o, 3, 2.5, 0.001).stop);
  EXPECT_EQ(ShouldStop(o, 1, 2.5, kInf).reason, "budget 2.0 s spent (no interval)");
  StopOptions small = o;
  small.budget_s = 0.05;
  EXPECT_EQ(ShouldStop(small, 20, 0.06, 0.25).reason, "budget 0.05 s spent (\u00b125%)");
}

TEST(ShouldStopTest, RoundLimit) {
  const StopOptions o;
  EXPECT_FALSE(ShouldStop(o, 4095, 1, 0.02).stop);
  const StopDecision d = ShouldStop(o, 4096, 1, 0.012);
  EXPECT_TRUE(d.stop);
  EXPECT_EQ(d.reason, "round limit 4096 (\u00b11.2%)");
}

TEST(ShouldStopTest, NaNPrecisionNeverCountsAsReached) {
  const StopOptions o;
  EXPECT_FALSE(ShouldStop(o, 20, 0.1, std::nan("")).stop);
}

TEST(GroupPrecisionTest, WorstOfEstimatesAndPairs) {
  const std::vector<double> a = {1.0, 1.02, 0.98, 1.01, 0.99, 1.0};
  // b = 2a: the pair is exact, so a's own interval is the worst.
  std::vector<double> b;
  for (double v : a) b.push_back(2 * v);
  const double own = EstimateOf(a).RelHalfWidth();
  EXPECT_GT(own, 0);
  EXPECT_NEAR(GroupPrecision({a, b}), own, 1e-12);
  // c wobbles against a: the pair is worse than any estimate.
  const std::vector<double> c = {1.0, 0.96, 1.03, 0.97, 1.04, 1.0};
  const double pair = PairedRatio(a, c).RelHalfWidth();
  EXPECT_GT(pair, std::max(own, EstimateOf(c).RelHalfWidth()));
  EXPECT_NEAR(GroupPrecision({a, b, c}), std::max(pair, PairedRatio(b, c).RelHalfWidth()), 1e-12);
}

TEST(GroupPrecisionTest, NothingToClaimIsInfinite) {
  EXPECT_EQ(GroupPrecision({}), kInf);
  EXPECT_EQ(GroupPrecision({{1.0}}), kInf);
  EXPECT_EQ(GroupPrecision({{1.0, 1.1, 1.2}, {1.0}}), kInf);
  EXPECT_EQ(GroupPrecision({{1.0, 1.1, 1.2}, {1.0, 0, 1.0}}), kInf);
  EXPECT_EQ(GroupPrecision({{1.0, 1.1, 1.2}, {1.0, 1.1}}), kInf);  // lengths differ
}

}  // namespace
}  // namespace gemmprof::measure
