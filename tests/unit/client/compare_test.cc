// compare on two synthetic jobs with known ratios and noise.
#include <gtest/gtest.h>

#include <cmath>

#include "client/render/comparison.h"
#include "report_fixtures.h"

namespace gemmprof::client::render {
namespace {

using core::Mode;
using core::Pass;
using core::Recipe;

// The first line of `text` that contains `token`, or "".
std::string LineWith(const std::string& text, const std::string& token) {
  const size_t at = text.find(token);
  if (at == std::string::npos) return "";
  const size_t begin = text.rfind('\n', at) + 1, end = text.find('\n', at);
  return text.substr(begin, end - begin);
}

// A done bf16/autocast fprop item with median `ms`, p20/p80 at ms x (1 -/+ half_spread)
// and a stdev of `stdev_frac` x ms (power-capping outliers make it much wider).
core::ItemRecord Item(const char* name, core::GemmShape s, Recipe r, double ms, double half_spread,
                      double stdev_frac) {
  core::ItemRecord item;
  item.item.op = {name, Pass::kFprop, s, 1, 1, true};
  item.item.recipe = r;
  item.status = core::ItemStatus::kDone;
  item.result = core::Measurement{};
  core::SampleStats& t = item.result->time;
  t.count = 100;
  t.median_ms = ms;
  t.stdev_ms = ms * stdev_frac;
  t.p20_ms = ms * (1 - half_spread);
  t.p80_ms = ms * (1 + half_spread);
  return item;
}

// A: five GEMMs at 1 ms; B: the same GEMMs at known ratios. "tight": half-spread 0.5%
// (threshold max(2%, 3 x sqrt(2) x 0.5%) = 2.12%); "noisy": half-spread 1.5% (6.36%);
// "outliers": tight p20-p80 but a 10% stdev, as on a power-capped GPU.
std::pair<core::Report, core::Report> Jobs() {
  struct Row {
    const char* name;
    core::GemmShape s;
    double ratio, half_spread, stdev;
  };
  const Row rows[] = {{"tight_slower", {1024, 1024, 1024}, 1.10, 0.005, 0.005},
                      {"tight_faster", {2048, 1024, 1024}, 0.90, 0.005, 0.005},
                      {"tight_flat", {4096, 1024, 1024}, 1.01, 0.005, 0.005},
                      {"noisy_3pct", {8192, 1024, 1024}, 1.03, 0.015, 0.03},
                      {"outliers_slower", {16384, 1024, 1024}, 1.10, 0.005, 0.10}};
  core::Report a, b;
  a.job.id = 1;
  b.job.id = 2;
  b.job.device.cublaslt_version = "13.1.0";
  a.job.device.cublaslt_version = "13.0.2";
  for (const Row& r : rows) {
    a.items.push_back(Item(r.name, r.s, Recipe::kBf16, 1.0, r.half_spread, r.stdev));
    b.items.push_back(Item(r.name, r.s, Recipe::kBf16, r.ratio, r.half_spread, r.stdev));
  }
  a.items.push_back(Item("only_a", {64, 64, 64}, Recipe::kFp8Block, 1.0, 0.0, 0.0));
  return {a, b};
}

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
  const auto [a, b] = Jobs();
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
  const std::string text = RenderComparison(c, 1, 2);
  EXPECT_NE(text.find("5 matched items: 1 faster, 2 same, 2 slower in B"), std::string::npos);
  const std::string row = LineWith(text, "tight_slower");
  EXPECT_NE(row.find("1.10x             2.1%  slower"), std::string::npos) << row;
  EXPECT_NE(text.find("noise threshold max(2%, 3 x sqrt(a^2 + b^2)), where a and b are each "
                      "side's relative half-spread (p80 - p20) / (2 x median)"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("only in A: 1 item (fp8-block/autocast 1): fprop only_a 64x64x64 "
                      "fp8-block/autocast"),
            std::string::npos)
      << text;
}

TEST(UnmatchedLineTest, CountsPerRecipeAndModeWithFiveGroupsAtMost) {
  std::vector<UnmatchedItem> items;
  const Recipe recipes[] = {Recipe::kBf16, Recipe::kFp8Current, Recipe::kFp8Delayed,
                            Recipe::kFp8Block};
  for (Recipe r : recipes)
    for (Mode m : {Mode::kAutocast, Mode::kPrequant})
      for (int i = 0; i < 12; ++i) {
        if (r == Recipe::kBf16 && m == Mode::kAutocast) continue;  // matched in the other job
        if (r == Recipe::kFp8Current && m == Mode::kAutocast) continue;
        items.push_back({"item", r, m});
      }
  EXPECT_EQ(UnmatchedLine("A", items),
            "only in A: 72 items (bf16/prequant 12, fp8-current/prequant 12, "
            "fp8-delayed/autocast 12, fp8-delayed/prequant 12, fp8-block/autocast 12, "
            "... and 1 more)");
  const std::vector<UnmatchedItem> two = {
      {"fprop x bf16/prequant", Recipe::kBf16, Mode::kPrequant},
      {"dgrad x bf16/prequant", Recipe::kBf16, Mode::kPrequant}};
  EXPECT_EQ(UnmatchedLine("B", two),
            "only in B: 2 items (bf16/prequant 2): fprop x bf16/prequant, dgrad x bf16/prequant");
}

TEST(CompareReportsTest, MatchesOnModeAndGroupsToo) {
  auto [a, b] = Jobs();
  for (auto& item : b.items) item.item.mode = Mode::kPrequant;
  EXPECT_TRUE(CompareReports(a, b).items.empty());
  auto [c, d] = Jobs();
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
  a.items = {Item("mlp_gate", s, Recipe::kBf16, 1.0, 0.005, 0.005),
             Item("mlp_up", s, Recipe::kBf16, 2.0, 0.005, 0.005)};
  b.items = {Item("mlp_gate", s, Recipe::kBf16, 1.0, 0.005, 0.005),
             Item("mlp_up", s, Recipe::kBf16, 2.0, 0.005, 0.005)};
  const Comparison c = CompareReports(a, b);
  ASSERT_EQ(c.items.size(), 2u);
  for (const ItemComparison& item : c.items) {
    EXPECT_DOUBLE_EQ(item.ratio, 1.0);
    EXPECT_EQ(item.verdict, Verdict::kSame);
  }
  EXPECT_TRUE(c.only_in_a.empty());
  EXPECT_TRUE(c.only_in_b.empty());
}

// An estimate at `ms` with a relative half-width `half` from `rounds` rounds.
core::Estimate Est(double ms, double half, int32_t rounds = 30) {
  return {ms, ms * (1 - half), ms * (1 + half), rounds, static_cast<double>(rounds)};
}

// A done item measured in rounds (the isolated estimate; b2b when b2b_ms > 0).
core::ItemRecord RoundsItem(const char* name, double ms, double half, double b2b_ms = 0) {
  core::ItemRecord item = Item(name, {1024, 1024, 1024}, Recipe::kBf16, ms, 0.005, 0.005);
  item.result->time.median_ms = 123;  // the rounds' mean is the headline, not this
  item.result->isolated = Est(ms, half);
  item.result->round_ms = std::vector<double>(30, ms);
  if (b2b_ms > 0) {
    item.result->b2b = Est(b2b_ms, half);
    item.result->b2b_count = 8;
  }
  return item;
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
  const core::ItemRecord old_a = Item("x", {1024, 1024, 1024}, Recipe::kBf16, 1.0, 0.005, 0.005);
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

TEST(CompareRoundsTest, RenderShowsTheIntervalAndTheRule) {
  core::Report a, b;
  a.items.push_back(RoundsItem("x", 1.0, 0.003, 0.9));
  b.items.push_back(RoundsItem("x", 1.05, 0.003, 0.9));
  const std::string text = RenderComparison(CompareReports(a, b), 1, 2);
  EXPECT_NE(text.find("B/A 95% interval"), std::string::npos) << text;
  EXPECT_NE(text.find("b2b verdict"), std::string::npos) << text;
  EXPECT_NE(text.find("interval of B/A to exclude 1 and a change above 2.0%"), std::string::npos)
      << text;
  // Old results keep the old table: no interval column.
  const auto [oa, ob] = Jobs();
  EXPECT_EQ(RenderComparison(CompareReports(oa, ob), 1, 2).find("95% interval"), std::string::npos);
}

// Telemetry as NVML gives it for one item.
void SetTelemetry(core::ItemRecord& item, double clock_mean, double clock_min, double power,
                  double temp, int64_t throttled, int64_t samples) {
  core::Telemetry& t = item.result->telemetry;
  t.sm_clock_mhz_mean = clock_mean;
  t.sm_clock_mhz_min = clock_min;
  t.sm_clock_mhz_max = clock_mean + 100;
  t.power_w_avg = power;
  t.temp_c_max = temp;
  t.throttled_samples = throttled;
  t.telemetry_samples = samples;
}

TEST(CompareConditionsTest, BothJobsRunningStateAndAClockDriftNote) {
  auto [a, b] = Jobs();
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
  const std::string text = RenderComparison(c, 1, 2);
  EXPECT_NE(text.find("Running conditions"), std::string::npos) << text;
  EXPECT_NE(LineWith(text, "  A  ").find("1402"), std::string::npos) << text;
  EXPECT_NE(text.find("B ran at a 1.5% lower SM clock than A"), std::string::npos) << text;
  const nlohmann::ordered_json summary = ComparisonListing(c, 1, 2).summary;
  EXPECT_EQ(summary["running_conditions"]["a"]["items"], 4);
  EXPECT_DOUBLE_EQ(summary["running_conditions"]["b"]["sm_clock_mhz"].get<double>(), 1380.5);
}

TEST(CompareConditionsTest, NoNoteWithinHalfAPercentAndNoSectionWithoutTelemetry) {
  auto [a, b] = Jobs();
  for (int i = 0; i < 5; ++i) {
    SetTelemetry(a.items[i], 1400, 1300, 690, 68, 0, 100);
    SetTelemetry(b.items[i], 1395, 1300, 690, 68, 0, 100);  // -0.36%
  }
  const std::string text = RenderComparison(CompareReports(a, b), 1, 2);
  EXPECT_NE(text.find("Running conditions"), std::string::npos) << text;
  EXPECT_EQ(text.find("SM clock than A"), std::string::npos) << text;
  // Host runner or results stored before telemetry: neither the section nor the note.
  const auto [oa, ob] = Jobs();
  const Comparison plain = CompareReports(oa, ob);
  EXPECT_EQ(RenderComparison(plain, 1, 2).find("Running conditions"), std::string::npos);
  EXPECT_TRUE(ComparisonListing(plain, 1, 2).summary["running_conditions"].is_null());
  // A recorded mean of 0 (results before it was stored): the midrange stands in.
  auto [ma, mb] = Jobs();
  SetTelemetry(ma.items[0], 0, 1300, 690, 68, 0, 100);
  SetTelemetry(mb.items[0], 0, 1300, 690, 68, 0, 100);
  ma.items[0].result->telemetry.sm_clock_mhz_max = 1500;
  EXPECT_DOUBLE_EQ(CompareReports(ma, mb).conditions_a.sm_clock_mhz, 1400);
}

}  // namespace
}  // namespace gemmprof::client::render
