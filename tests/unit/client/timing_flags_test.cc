// The timing flags of `submit` and `plan` for interleaved rounds: --num-iters (fixed
// rounds), --precision-pct and --item-budget (noise-aware stopping), --b2b. Bad values
// fail with exit code 2 and one line naming the flag, before any connection.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "app_harness.h"
#include "core/job.h"

namespace gemmprof::client {
namespace {

using ::testing::HasSubstr;

using testing::AppTest;
using testing::BadCase;
using testing::ExpectUsageError;
using testing::Result;

TEST_F(AppTest, BadTimingFlags) {
  const std::vector<BadCase> cases = {
      {Seed({"--num-iters", "0"}), "--num-iters: 0 rounds: omit --num-iters for noise-aware"},
      {Seed({"--num-iters=-3"}), "--num-iters: value -3 is outside 1..100000"},
      {Seed({"--num-iters", "100001"}), "--num-iters: value 100001 is outside 1..100000"},
      {Seed({"--num-iters", "ten"}), "--num-iters: value ten is not an integer"},
      {Seed({"--num-iters", "2.5"}), "--num-iters: value 2.5 is not an integer"},
      {Seed({"--num-iters", "99999999999999999999"}), "--num-iters: value 99999999999999999999"},
      {Seed({"--precision-pct", "0"}), "--precision-pct: value 0 is outside 0.1..50"},
      {Seed({"--precision-pct", "0.09"}), "--precision-pct: value 0.09 is outside 0.1..50"},
      {Seed({"--precision-pct=-1"}), "--precision-pct: value -1 is outside"},
      {Seed({"--precision-pct", "50.5"}), "--precision-pct: value 50.5 is outside"},
      {Seed({"--precision-pct", "one"}), "--precision-pct: value one is not a number"},
      {Seed({"--precision-pct", "nan"}), "--precision-pct: value nan is not a number"},
      {Seed({"--precision-pct", "inf"}), "--precision-pct: value inf is not a number"},
      {Seed({"--precision-pct", "1%"}), "--precision-pct: value 1% is not a number"},
      {Seed({"--item-budget", "0"}), "--item-budget: value 0 is outside 0.05..600"},
      {Seed({"--item-budget", "0.04"}), "--item-budget: value 0.04 is outside"},
      {Seed({"--item-budget=-2"}), "--item-budget: value -2 is outside"},
      {Seed({"--item-budget", "601"}), "--item-budget: value 601 is outside"},
      {Seed({"--item-budget", "2s"}), "--item-budget: value 2s is not a number"},
      {Seed({"--b2b", "1"}), "--b2b: 1: one GEMM is not back to back; use 2..1000, or 0 for auto"},
      {Seed({"--b2b=-2"}), "--b2b: value -2 is outside 2..1000, or 0 for auto"},
      {Seed({"--b2b", "1001"}), "--b2b: value 1001 is outside"},
      {Seed({"--b2b", "ten"}), "--b2b: value ten is not an integer"},
      {Seed({"--b2b", "99999999999999999999"}), "--b2b: value 99999999999999999999"},
      {Seed({"--num-iters", "50", "--precision-pct", "1"}),
       "--num-iters (a fixed number of rounds) conflicts with --precision-pct"},
      {Seed({"--item-budget", "3", "--num-iters", "50"}),
       "--num-iters (a fixed number of rounds) conflicts with --item-budget"},
      {{"plan", "--shapes", "64", "--b2b", "1"}, "--b2b"},
      {{"plan", "--shapes", "64", "--num-iters", "5", "--item-budget", "1"}, "conflicts"},
  };
  for (const BadCase& c : cases) ExpectUsageError(Run(c.args), c);
}

TEST_F(AppTest, NoiseAwareFlagsReachTheSpec) {
  const Result r = Run(Seed({"--precision-pct", "0.5", "--item-budget", "4", "--b2b", "10"}));
  ASSERT_EQ(r.code, 0) << r.err;
  ASSERT_EQ(fake_.submitted.size(), 1u);
  const core::TimingOptions& t = fake_.submitted[0].timing;
  EXPECT_EQ(t.timed_iters, 0);  // a precision asks for noise-aware rounds
  EXPECT_DOUBLE_EQ(t.precision_target, 0.005);
  EXPECT_DOUBLE_EQ(t.item_budget_s, 4);
  EXPECT_EQ(t.b2b_count, 10);
}

TEST_F(AppTest, TimingFlagEdgesAreAccepted) {
  const std::vector<std::vector<std::string>> good = {
      {"--precision-pct", "0.1", "--item-budget", "0.05", "--b2b", "2"},
      {"--precision-pct", "50", "--item-budget", "600", "--b2b", "1000"},
      {"--num-iters", "1", "--b2b", "0"},
      {"--num-iters", "100000"},
  };
  for (const auto& flags : good) {
    const Result r = Run(Seed(flags));
    EXPECT_EQ(r.code, 0) << flags[0] << " " << flags[1] << ": " << r.err;
  }
  ASSERT_EQ(fake_.submitted.size(), 4u);
  EXPECT_DOUBLE_EQ(fake_.submitted[0].timing.precision_target, 0.001);
  EXPECT_DOUBLE_EQ(fake_.submitted[0].timing.item_budget_s, 0.05);
  EXPECT_DOUBLE_EQ(fake_.submitted[1].timing.precision_target, 0.5);
  EXPECT_EQ(fake_.submitted[1].timing.b2b_count, 1000);
  EXPECT_EQ(fake_.submitted[2].timing.timed_iters, 1);
  EXPECT_EQ(fake_.submitted[3].timing.timed_iters, 100000);
}

TEST_F(AppTest, FixedRoundsKeepTheOtherDefaults) {
  ASSERT_EQ(Run(Seed({"--num-iters", "50"})).code, 0);
  ASSERT_EQ(Run(Seed({})).code, 0);
  ASSERT_EQ(fake_.submitted.size(), 2u);
  const core::TimingOptions defaults;
  EXPECT_EQ(fake_.submitted[0].timing.timed_iters, 50);
  EXPECT_EQ(fake_.submitted[0].timing.precision_target, defaults.precision_target);
  EXPECT_EQ(fake_.submitted[0].timing.item_budget_s, defaults.item_budget_s);
  EXPECT_EQ(fake_.submitted[0].timing.b2b_count, 0);
  // Without timing flags the spec carries the defaults, whatever they are.
  EXPECT_EQ(fake_.submitted[1].timing, defaults);
}

TEST_F(AppTest, HelpTeachesNoiseAwareStopping) {
  const Result r = Run({"submit", "--help"});
  ASSERT_EQ(r.code, 0);
  EXPECT_THAT(r.out, HasSubstr("omit for noise-aware stopping"));
  EXPECT_THAT(r.out, HasSubstr("--precision-pct"));
  EXPECT_THAT(r.out, HasSubstr("95% interval"));
  EXPECT_THAT(r.out, HasSubstr("--item-budget"));
  EXPECT_THAT(r.out, HasSubstr("--b2b"));
}

}  // namespace
}  // namespace gemmprof::client
