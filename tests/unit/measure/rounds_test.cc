// The measurement engine with scripted timings: what it asks the timer for, when the
// rounds stop, how drift, outliers and noise come out, and the kernel-choice contest.
#include "measure/rounds.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <random>

#include "core/stats.h"
#include "tests/unit/measure/scripted_timer.h"

namespace gemmprof::measure {
namespace {

using testing::FakeClock;
using ::testing::HasSubstr;
using testing::ScriptedTimer;
using ::testing::StartsWith;

// Every unit of `member` (any form) runs `ms` per iteration, times `drift(now)`.
struct Work {
  std::vector<double> iso_ms;                // per member, form 0
  std::vector<std::vector<double>> form_ms;  // per member, forms 1.. (contenders)
  std::vector<double> quant_ms;              // per member; 0: none
  std::function<double(double)> drift = [](double) { return 1.0; };
  double noise = 0;  // relative, uniform +-noise per sample
  uint32_t seed = 1;
};

std::unique_ptr<ScriptedTimer> TimerFor(FakeClock* clock, const Work& w) {
  auto rng = std::make_shared<std::mt19937>(w.seed);
  return std::make_unique<ScriptedTimer>(clock, [w, rng](const UnitId& u, double now, int64_t) {
    double ms = u.form == 0 ? w.iso_ms[u.member] : w.form_ms[u.member][u.form - 1];
    if (u.kind == UnitKind::kQuantization) ms = w.quant_ms[u.member];
    std::uniform_real_distribution<double> noise(-w.noise, w.noise);
    return ms * w.drift(now) * (1 + noise(*rng));
  });
}

MemberSpec Member(size_t group, bool quant = false, std::vector<std::string> forms = {}) {
  return {group, quant, std::move(forms)};
}

RoundsOptions Fixed(int32_t rounds) {
  RoundsOptions o;
  o.stop.fixed_rounds = rounds;
  return o;
}

RoundsOptions NoiseAware(double budget_s = 2.0) {
  RoundsOptions o;
  o.stop.precision_target = 0.01;
  o.stop.budget_s = budget_s;
  return o;
}

TEST(MeasureRoundsTest, FixedRoundsTimeOneSampleAVisitAfterWarmUpAndPilot) {
  FakeClock clock;
  Work w{{0.1, 0.2}, {{}, {}}, {0, 0.05}};
  auto timer = TimerFor(&clock, w);
  RoundsOptions o = Fixed(6);
  o.warmup_launches = 7;
  absl::StatusOr<RoundsResult> r = MeasureRounds({Member(0), Member(0, true)}, o, *timer, clock);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->rounds, 6);
  EXPECT_EQ(r->stop_reason, "fixed 6 rounds");
  // Warm-up: each isolated unit with the asked launches, the quantization unit twice.
  ASSERT_EQ(timer->warmups.size(), 3u);
  EXPECT_EQ(timer->warmups[0].second, 7);
  EXPECT_EQ(timer->warmups[2].first.unit.kind, UnitKind::kQuantization);
  EXPECT_EQ(timer->warmups[2].second, 2);
  // The pilot: 3 samples of each isolated and quantization unit, not interleaved.
  ASSERT_GE(timer->calls.size(), 2u);
  ASSERT_EQ(timer->calls[0].size(), 3u);
  for (const Visit& v : timer->calls[0]) {
    EXPECT_EQ(v.samples, 3);
    EXPECT_FALSE(v.interleaved);
  }
  // Rounds: every unit once a round, one sample a visit (fixed mode), interleaved.
  size_t visits = 0;
  for (size_t c = 1; c < timer->calls.size(); ++c) {
    for (const Visit& v : timer->calls[c]) {
      EXPECT_EQ(v.samples, 1);
      EXPECT_TRUE(v.interleaved);
      ++visits;
    }
  }
  EXPECT_EQ(visits, 6u * 5);  // (iso + b2b) + (iso + b2b + quant)
  for (const MemberRounds& m : r->members) {
    EXPECT_EQ(m.iso_rounds.size(), 6u);
    EXPECT_EQ(m.b2b_rounds.size(), 6u);
    EXPECT_EQ(m.b2b_every, 1);
    EXPECT_EQ(m.stop_reason, "fixed 6 rounds");
  }
  EXPECT_TRUE(r->members[0].quant_rounds.empty());
  EXPECT_EQ(r->members[1].quant_rounds.size(), 6u);
  EXPECT_NEAR(r->members[1].quant_rounds[0], 0.05, 1e-12);
}

TEST(MeasureRoundsTest, EachRoundVisitsTheUnitsInTheBalancedOrder) {
  FakeClock clock;
  Work w{{0.1, 0.1, 0.1}, {{}, {}, {}}, {0, 0, 0}};
  auto timer = TimerFor(&clock, w);
  timer->max_rounds_per_call = 1;
  ASSERT_TRUE(MeasureRounds({Member(0), Member(0), Member(0)}, Fixed(12), *timer, clock).ok());
  ASSERT_EQ(timer->calls.size(), 13u);
  // Units in plan order: m0 iso, m0 b2b, m1 iso, m1 b2b, m2 iso, m2 b2b. Across a cycle of
  // 6 rounds each unit takes each position once.
  std::vector<std::vector<int>> position(6, std::vector<int>(6, 0));
  for (int round = 0; round < 6; ++round) {
    const std::vector<Visit>& call = timer->calls[1 + round];
    ASSERT_EQ(call.size(), 6u);
    for (int p = 0; p < 6; ++p) {
      const Visit& v = call[p];
      const int unit =
          2 * static_cast<int>(v.unit.member) + (v.unit.kind == UnitKind::kBackToBack ? 1 : 0);
      ++position[unit][p];
    }
  }
  for (const auto& unit : position) {
    for (int count : unit) EXPECT_EQ(count, 1);
  }
}

TEST(MeasureRoundsTest, DriftCommonToARoundCancelsInThePairedRatio) {
  FakeClock clock;
  Work w{{0.1, 0.2}, {{}, {}}, {0, 0}};
  // +-20% clock drift over the rounds (slow against one round), tiny noise: each series
  // moves, their ratio not.
  w.drift = [](double t) { return 1 + 0.2 * std::sin(t / 0.2); };
  w.noise = 0.0005;
  auto timer = TimerFor(&clock, w);
  absl::StatusOr<RoundsResult> r = MeasureRounds({Member(0), Member(0)}, Fixed(60), *timer, clock);
  ASSERT_TRUE(r.ok()) << r.status();
  const std::vector<double>& a = r->members[0].iso_rounds;
  const std::vector<double>& b = r->members[1].iso_rounds;
  const auto [lo, hi] = std::minmax_element(a.begin(), a.end());
  EXPECT_GT(*hi / *lo, 1.1);  // the drift is in every series
  const core::stats::Interval ratio = core::stats::PairedRatio(b, a);
  ASSERT_TRUE(ratio.valid);
  EXPECT_NEAR(ratio.center, 2.0, 2.0 * 0.003);
  EXPECT_LT(ratio.RelHalfWidth(), 0.003);
}

TEST(MeasureRoundsTest, AVisitsMedianAbsorbsOutlierSamples) {
  FakeClock clock;
  int64_t calls = 0;
  ScriptedTimer timer(&clock, [&calls](const UnitId&, double, int64_t) {
    return ++calls % 10 == 0 ? 0.5 : 0.1;  // one sample in ten five times slower
  });
  absl::StatusOr<RoundsResult> r = MeasureRounds({Member(0)}, NoiseAware(), timer, clock);
  ASSERT_TRUE(r.ok()) << r.status();
  const MemberRounds& m = r->members[0];
  // About 1 ms of samples a visit: 10 of 0.1 ms.
  EXPECT_EQ(timer.calls[1][0].samples, 10);
  for (double v : m.iso_rounds) EXPECT_DOUBLE_EQ(v, 0.1);
  EXPECT_NE(std::find(m.iso_samples.begin(), m.iso_samples.end(), 0.5), m.iso_samples.end());
  EXPECT_THAT(r->stop_reason, StartsWith("precision \u00b10.0% reached"));
  // Reached at once, but looked at after about 100 ms of work: rounds of 1 ms of
  // isolated samples and one 1 ms back-to-back launch of 10 GEMMs.
  EXPECT_EQ(r->rounds, 50);
}

TEST(MeasureRoundsTest, AGroupThatNeverConvergesEndsAtTheBudgetAndTheOtherSaysItsOwn) {
  FakeClock clock;
  Work w{{0.1, 0.3}, {{}, {}}, {0, 0}};
  auto rng = std::make_shared<std::mt19937>(7);
  ScriptedTimer timer(&clock, [rng](const UnitId& u, double, int64_t) {
    std::uniform_real_distribution<double> wild(0.2, 1.8);
    return u.member == 0 ? 0.1 : 0.3 * wild(*rng);  // member 1: +-80%, every sample
  });
  timer.overhead_s = 0.001;
  absl::StatusOr<RoundsResult> r =
      MeasureRounds({Member(0), Member(1)}, NoiseAware(0.25), timer, clock);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_THAT(r->stop_reason, StartsWith("budget 0.25 s spent (\u00b1"));
  EXPECT_GE(clock.now_s, 0.25);
  EXPECT_GT(r->rounds, 10);
  EXPECT_THAT(r->members[0].stop_reason, StartsWith("precision \u00b10.0% reached"));
  EXPECT_THAT(r->members[1].stop_reason, StartsWith("budget 0.25 s spent (\u00b1"));
}

TEST(MeasureRoundsTest, TheDeadlineEndsTheRoundsAndSaysThePrecisionReached) {
  FakeClock clock;
  Work w{{0.2}, {{}}, {0}};
  w.noise = 0.5;
  auto timer = TimerFor(&clock, w);
  RoundsOptions o = NoiseAware(100);
  o.deadline_unix_ms = FakeClock::kUnixOriginMs + 50;
  absl::StatusOr<RoundsResult> r = MeasureRounds({Member(0)}, o, *timer, clock);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->deadline);
  EXPECT_THAT(r->stop_reason, StartsWith("deadline (\u00b1"));
  EXPECT_LT(clock.now_s, 0.2);  // ended near the deadline, nowhere near the budget
}

TEST(MeasureRoundsTest, BackToBackIsSizedPerGroupFromItsShortestGemm) {
  FakeClock clock;
  Work w{{0.1, 0.5, 0.8}, {{}, {}, {}}, {0, 0, 0}};
  auto timer = TimerFor(&clock, w);
  absl::StatusOr<RoundsResult> r =
      MeasureRounds({Member(4), Member(4), Member(9)}, Fixed(3), *timer, clock);
  ASSERT_TRUE(r.ok()) << r.status();
  // 2 ms launches: group 4 from 0.1 ms (20, at most 10), group 9 from 0.8 ms (2.5 -> 3).
  EXPECT_EQ(timer->b2b, (std::vector<std::pair<size_t, int32_t>>{{0, 10}, {1, 10}, {2, 3}}));
  EXPECT_EQ(r->members[1].b2b_count, 10);
  // A count the job asks for is taken as it is.
  FakeClock clock2;
  auto timer2 = TimerFor(&clock2, w);
  RoundsOptions o = Fixed(3);
  o.b2b_count = 4;
  ASSERT_TRUE(MeasureRounds({Member(4), Member(4), Member(9)}, o, *timer2, clock2).ok());
  for (const auto& [member, n] : timer2->b2b) EXPECT_EQ(n, 4) << member;
}

TEST(MeasureRoundsTest, LongGemmsAreTimedBackToBackEverySecondNoiseAwareRound) {
  FakeClock clock;
  Work w{{1.5}, {{}}, {0}};
  w.noise = 0.002;
  auto timer = TimerFor(&clock, w);
  absl::StatusOr<RoundsResult> r = MeasureRounds({Member(0)}, NoiseAware(), *timer, clock);
  ASSERT_TRUE(r.ok()) << r.status();
  const MemberRounds& m = r->members[0];
  EXPECT_EQ(m.b2b_every, 2);
  EXPECT_EQ(m.b2b_count, 2);
  EXPECT_EQ(m.b2b_rounds.size(), (m.iso_rounds.size() + 1) / 2);
  // Not in fixed mode.
  FakeClock clock2;
  auto timer2 = TimerFor(&clock2, w);
  absl::StatusOr<RoundsResult> fixed = MeasureRounds({Member(0)}, Fixed(4), *timer2, clock2);
  ASSERT_TRUE(fixed.ok());
  EXPECT_EQ(fixed->members[0].b2b_every, 1);
  EXPECT_EQ(fixed->members[0].b2b_rounds.size(), 4u);
}

TEST(MeasureRoundsTest, RoundsPerCallAreBoundedByTheTimerAndTheStopCheck) {
  FakeClock clock;
  Work w{{0.01}, {{}}, {0}};
  auto timer = TimerFor(&clock, w);
  timer->max_rounds_per_call = 3;
  absl::StatusOr<RoundsResult> r = MeasureRounds({Member(0)}, NoiseAware(), *timer, clock);
  ASSERT_TRUE(r.ok()) << r.status();
  for (size_t c = 1; c < timer->calls.size(); ++c) {
    EXPECT_EQ(timer->calls[c].size(), 3u * 2) << "call " << c;
  }
  EXPECT_EQ(r->rounds, 12);  // 10 rounds at least, in calls of 3
  // Unbounded timer: about 100 ms of work between looks at the stop rule. A round here is
  // 64 isolated samples (the most a visit takes: 0.64 ms) and 10 back-to-back samples,
  // each a launch of 10 GEMMs (1 ms): 61 rounds.
  FakeClock clock2;
  auto timer2 = TimerFor(&clock2, w);
  ASSERT_TRUE(MeasureRounds({Member(0)}, NoiseAware(), *timer2, clock2).ok());
  EXPECT_EQ(timer2->calls[1][0].samples, 64);
  EXPECT_EQ(timer2->calls[1].size(), 2u * 61);
}

TEST(MeasureRoundsTest, ATimerErrorFailsTheMeasurement) {
  FakeClock clock;
  Work w{{0.1}, {{}}, {0}};
  auto timer = TimerFor(&clock, w);
  timer->fail_call = 1;
  absl::StatusOr<RoundsResult> r = MeasureRounds({Member(0)}, Fixed(5), *timer, clock);
  EXPECT_EQ(r.status(), absl::InternalError("device fault"));
}

TEST(MeasureRoundsTest, EveryTimerCallIsAStepAndACancelStopsTheNext) {
  FakeClock clock;
  Work w{{0.1}, {{}}, {0}};
  auto timer = TimerFor(&clock, w);
  core::MeasureProgress progress;
  RoundsOptions o = Fixed(5);
  o.progress = &progress;
  ASSERT_TRUE(MeasureRounds({Member(0)}, o, *timer, clock).ok());
  EXPECT_EQ(progress.steps(), static_cast<int64_t>(timer->calls.size()));
  EXPECT_GT(progress.slowest_step_ms(), 0) << "the scripted samples advance the fake clock";
  // Cancelled before the first call: nothing is timed.
  auto timer2 = TimerFor(&clock, w);
  core::MeasureProgress cancelled;
  cancelled.RequestCancel();
  o.progress = &cancelled;
  const absl::StatusOr<RoundsResult> r = MeasureRounds({Member(0)}, o, *timer2, clock);
  EXPECT_TRUE(absl::IsCancelled(r.status())) << r.status();
  EXPECT_TRUE(timer2->calls.empty());
}

TEST(MeasureRoundsTest, NothingToMeasureIsRefused) {
  FakeClock clock;
  ScriptedTimer timer(&clock, [](const UnitId&, double, int64_t) { return 1.0; });
  EXPECT_TRUE(absl::IsInvalidArgument(MeasureRounds({}, Fixed(3), timer, clock).status()));
}

TEST(MeasureRoundsTest, WithoutAPilotEveryVisitIsOneSampleAndBackToBackEveryRound) {
  FakeClock clock;
  Work w{{2.0}, {{}}, {0}};
  auto timer = TimerFor(&clock, w);
  RoundsOptions o = Fixed(5);
  o.pilot = false;
  o.b2b_count = 3;
  absl::StatusOr<RoundsResult> r = MeasureRounds({Member(0)}, o, *timer, clock);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(timer->calls.size(), 1u);  // no pilot; fixed rounds go in one call
  for (const Visit& v : timer->calls[0]) EXPECT_EQ(v.samples, 1);
  EXPECT_EQ(r->members[0].b2b_count, 3);
  EXPECT_EQ(r->members[0].b2b_rounds.size(), 5u);
}

// --- The contest: forms within a few percent decided in the item's own rounds.

TEST(ContestTest, AFormHalfAPercentFasterIsKeptWithItsSeries) {
  FakeClock clock;
  Work w{{1.0}, {{0.995, 1.02}}, {0}};
  w.drift = [](double t) { return 1 + 0.05 * std::sin(t / 0.3); };
  w.noise = 0.001;
  auto timer = TimerFor(&clock, w);
  absl::StatusOr<RoundsResult> r =
      MeasureRounds({Member(0, false, {"A", "B", "C"})}, NoiseAware(), *timer, clock);
  ASSERT_TRUE(r.ok()) << r.status();
  const MemberRounds& m = r->members[0];
  EXPECT_EQ(m.kept_form, 1u);
  EXPECT_THAT(m.contest_note,
              StartsWith("kept after the item's own rounds: B (isolated time over A's, paired "
                         "over "));
  EXPECT_THAT(m.contest_note, HasSubstr("B 0.995"));
  EXPECT_THAT(m.contest_note, HasSubstr("C 1.020"));
  // The member's series are B's: paired against the drift, 0.995 of A's level.
  for (size_t i = 0; i < m.iso_rounds.size(); ++i) EXPECT_LT(m.iso_rounds[i], 1.06 * 0.995);
  // Every form was warmed up and timed in the rounds.
  EXPECT_EQ(timer->warmups.size(), 3u);
}

TEST(ContestTest, TheOwnFormStaysWhenTheContendersAreSlower) {
  FakeClock clock;
  Work w{{1.0}, {{1.005}}, {0}};
  w.noise = 0.001;
  auto timer = TimerFor(&clock, w);
  absl::StatusOr<RoundsResult> r =
      MeasureRounds({Member(0, false, {"A", "B"})}, NoiseAware(), *timer, clock);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->members[0].kept_form, 0u);
  EXPECT_THAT(r->members[0].contest_note, HasSubstr("kept after the item's own rounds: A"));
  EXPECT_THAT(r->members[0].contest_note, HasSubstr("B 1.005"));
}

TEST(ContestTest, ContendersDoNotGateTheStopRule) {
  FakeClock clock;
  auto rng = std::make_shared<std::mt19937>(3);
  ScriptedTimer timer(&clock, [rng](const UnitId& u, double, int64_t) {
    std::uniform_real_distribution<double> wild(0.5, 1.5);
    return u.form == 0 ? 1.0 : wild(*rng);  // the contender never converges
  });
  absl::StatusOr<RoundsResult> r =
      MeasureRounds({Member(0, false, {"A", "B"})}, NoiseAware(5), timer, clock);
  ASSERT_TRUE(r.ok()) << r.status();
  // Stopped at the first look at the stop rule (25 rounds of 4 ms), on A's precision.
  EXPECT_EQ(r->rounds, 25);
  EXPECT_THAT(r->stop_reason, StartsWith("precision"));
}

TEST(ContestTest, OneRoundIsTooFewToCompare) {
  FakeClock clock;
  Work w{{1.0}, {{0.9}}, {0}};
  auto timer = TimerFor(&clock, w);
  absl::StatusOr<RoundsResult> r =
      MeasureRounds({Member(0, false, {"A", "B"})}, Fixed(1), *timer, clock);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->members[0].kept_form, 0u);
  EXPECT_EQ(r->members[0].contest_note,
            "kept: A (too few rounds to compare the contenders in them)");
}

TEST(StopOptionsForTest, FixedOrPrecisionWithABudgetPerMember) {
  core::TimingOptions t;
  t.timed_iters = 0;
  t.precision_target = 0.005;
  t.item_budget_s = 1.5;
  StopOptions s = StopOptionsFor(t, 4);
  EXPECT_EQ(s.fixed_rounds, 0);
  EXPECT_DOUBLE_EQ(s.precision_target, 0.005);
  EXPECT_DOUBLE_EQ(s.budget_s, 6.0);
  t.timed_iters = 30;
  EXPECT_EQ(StopOptionsFor(t, 4).fixed_rounds, 30);
}

}  // namespace
}  // namespace gemmprof::measure
