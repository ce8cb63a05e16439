// compare's listing on two synthetic jobs with known ratios and noise (the analysis is
// tested in tests/unit/report/comparison_test.cc).
#include <gtest/gtest.h>

#include "client/render/comparison.h"
#include "tests/unit/report/compare_fixtures.h"
#include "tests/unit/report/rounds_fixtures.h"

namespace gemmprof::client::render {
namespace {

using core::Mode;
using core::Recipe;
using report::CompareReports;
using report::UnmatchedItem;
using report::testing::CompareJobs;
using report::testing::RoundsItem;
using report::testing::SetTelemetry;

// What `gemmprof compare A B` prints: the listing's table form.
std::string CompareTable(const report::Comparison& c, int64_t job_a, int64_t job_b) {
  return RenderListing(ComparisonListing(c, job_a, job_b), ListingFormat::kTable);
}

// The first line of `text` that contains `token`, or "".
std::string LineWith(const std::string& text, const std::string& token) {
  const size_t at = text.find(token);
  if (at == std::string::npos) return "";
  const size_t begin = text.rfind('\n', at) + 1, end = text.find('\n', at);
  return text.substr(begin, end - begin);
}

TEST(CompareListingTest, VerdictsThresholdsTheRuleAndUnmatchedItems) {
  const auto [a, b] = CompareJobs();
  const std::string text = CompareTable(CompareReports(a, b), 1, 2);
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

TEST(CompareRoundsTest, RenderShowsTheIntervalAndTheRule) {
  core::Report a, b;
  a.items.push_back(RoundsItem("x", 1.0, 0.003, 0.9));
  b.items.push_back(RoundsItem("x", 1.05, 0.003, 0.9));
  const std::string text = CompareTable(CompareReports(a, b), 1, 2);
  EXPECT_NE(text.find("B/A 95% interval"), std::string::npos) << text;
  EXPECT_NE(text.find("b2b verdict"), std::string::npos) << text;
  EXPECT_NE(text.find("interval of B/A to exclude 1 and a change above 2.0%"), std::string::npos)
      << text;
  // Old results keep the old table: no interval column.
  const auto [oa, ob] = CompareJobs();
  EXPECT_EQ(CompareTable(CompareReports(oa, ob), 1, 2).find("95% interval"), std::string::npos);
}

TEST(CompareEnergyTest, EnergyColumnsOnlyWhereBothJobsMeasuredEnergy) {
  core::Report a, b;
  a.items.push_back(RoundsItem("x", 1.0, 0.003));
  b.items.push_back(RoundsItem("x", 1.0, 0.003));
  EXPECT_EQ(CompareTable(CompareReports(a, b), 1, 2).find("energy"), std::string::npos);
  report::testing::SetEnergy(*a.items[0].result, 0.0152);
  report::testing::SetEnergy(*b.items[0].result, 0.0121);
  const report::Comparison c = CompareReports(a, b);
  const std::string text = CompareTable(c, 1, 2);
  EXPECT_NE(text.find("energy B/A"), std::string::npos) << text;
  EXPECT_NE(text.find("15.200 mJ"), std::string::npos) << text;
  EXPECT_NE(text.find("12.100 mJ"), std::string::npos) << text;
  EXPECT_NE(LineWith(text, "15.200 mJ").find("less"), std::string::npos) << text;
  const Listing listing = ComparisonListing(c, 1, 2);
  const auto& cols = listing.records.columns;
  const size_t col = std::find(cols.begin(), cols.end(), "energy_ratio") - cols.begin();
  ASSERT_LT(col, cols.size());
  EXPECT_NEAR(std::get<double>(listing.records.rows[0][col]), 0.0121 / 0.0152, 1e-12);
}

TEST(CompareConditionsTest, BothJobsRunningStateAndAClockDriftNote) {
  auto [a, b] = CompareJobs();
  for (int i = 0; i < 4; ++i) {
    SetTelemetry(a.items[i], 1400 + i, 1300, 690, 68 + i, 50, 100);
    SetTelemetry(b.items[i], 1379 + i, 1290, 692, 70 + i, 100, 100);
  }
  SetTelemetry(a.items[4], 1900, 1900, 300, 40, 0, 100);
  const report::Comparison c = CompareReports(a, b);
  const std::string text = CompareTable(c, 1, 2);
  EXPECT_NE(text.find("Running conditions"), std::string::npos) << text;
  EXPECT_NE(LineWith(text, "  A  ").find("1402"), std::string::npos) << text;
  EXPECT_NE(text.find("B ran at a 1.5% lower SM clock than A"), std::string::npos) << text;
  const nlohmann::ordered_json summary = ComparisonListing(c, 1, 2).summary;
  EXPECT_EQ(summary["running_conditions"]["a"]["items"], 4);
  EXPECT_DOUBLE_EQ(summary["running_conditions"]["b"]["sm_clock_mhz"].get<double>(), 1380.5);
}

TEST(CompareConditionsTest, NoNoteWithinHalfAPercentAndNoSectionWithoutTelemetry) {
  auto [a, b] = CompareJobs();
  for (int i = 0; i < 5; ++i) {
    SetTelemetry(a.items[i], 1400, 1300, 690, 68, 0, 100);
    SetTelemetry(b.items[i], 1395, 1300, 690, 68, 0, 100);  // -0.36%
  }
  const std::string text = CompareTable(CompareReports(a, b), 1, 2);
  EXPECT_NE(text.find("Running conditions"), std::string::npos) << text;
  EXPECT_EQ(text.find("SM clock than A"), std::string::npos) << text;
  // Host runner or results stored before telemetry: neither the section nor the note.
  const auto [oa, ob] = CompareJobs();
  const report::Comparison plain = CompareReports(oa, ob);
  EXPECT_EQ(CompareTable(plain, 1, 2).find("Running conditions"), std::string::npos);
  EXPECT_TRUE(ComparisonListing(plain, 1, 2).summary["running_conditions"].is_null());
}

}  // namespace
}  // namespace gemmprof::client::render
