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

core::ItemRecord Item(const char* name, core::GemmShape s, Recipe r, double ms, double cv) {
  core::ItemRecord item;
  item.item.op = {name, Pass::kFprop, s, 1, 1, true};
  item.item.recipe = r;
  item.status = core::ItemStatus::kDone;
  item.result = core::Measurement{};
  core::SampleStats& t = item.result->time;
  t.count = 100;
  t.median_ms = ms;
  t.stdev_ms = ms * cv;
  t.p20_ms = ms * (1 - cv / 2);
  t.p80_ms = ms * (1 + cv / 2);
  return item;
}

// A: four GEMMs; B: the same GEMMs at known ratios. Noise (cv) 0.5% except "noisy".
std::pair<core::Report, core::Report> Jobs() {
  struct Row {
    const char* name;
    core::GemmShape s;
    double ratio, cv;
  };
  const Row rows[] = {{"slower", {1024, 1024, 1024}, 1.10, 0.005},
                      {"faster", {2048, 1024, 1024}, 0.90, 0.005},
                      {"flat", {4096, 1024, 1024}, 1.01, 0.005},
                      {"noisy", {8192, 1024, 1024}, 1.10, 0.05}};
  core::Report a, b;
  a.job.id = 1;
  b.job.id = 2;
  b.job.device.cublaslt_version = "13.1.0";
  a.job.device.cublaslt_version = "13.0.2";
  for (const Row& r : rows) {
    a.items.push_back(Item(r.name, r.s, Recipe::kBf16, 1.0, r.cv));
    b.items.push_back(Item(r.name, r.s, Recipe::kBf16, r.ratio, r.cv));
  }
  a.items.push_back(Item("only_a", {64, 64, 64}, Recipe::kFp8Block, 1.0, 0.0));
  return {a, b};
}

TEST(NoiseThresholdTest, FloorSigmaAndSpread) {
  core::SampleStats quiet{100, 1.0, 1.0, 0.999, 1.001, 0.99, 1.01, 0.001};
  EXPECT_DOUBLE_EQ(NoiseThreshold(quiet, quiet), kMinRelativeChange);
  core::SampleStats noisy = quiet;
  noisy.stdev_ms = 0.05;
  EXPECT_NEAR(NoiseThreshold(noisy, noisy), 3 * std::sqrt(2 * 0.05 * 0.05), 1e-12);
  core::SampleStats wide = quiet;
  wide.p20_ms = 0.9;
  wide.p80_ms = 1.2;
  EXPECT_NEAR(NoiseThreshold(quiet, wide), 0.3, 1e-12);
  EXPECT_EQ(Judge(1.0, 1.05, 0.02), Verdict::kSlower);
  EXPECT_EQ(Judge(1.0, 0.95, 0.02), Verdict::kFaster);
  EXPECT_EQ(Judge(1.0, 1.019, 0.02), Verdict::kSame);
}

TEST(CompareReportsTest, RatiosAndVerdictsAccountForNoise) {
  const auto [a, b] = Jobs();
  const Comparison c = CompareReports(a, b);
  ASSERT_EQ(c.items.size(), 4u);
  const Verdict expected[] = {Verdict::kSlower, Verdict::kFaster, Verdict::kSame, Verdict::kSame};
  const double ratios[] = {1.10, 0.90, 1.01, 1.10};
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_NEAR(c.items[i].ratio, ratios[i], 1e-12) << c.items[i].op.name;
    EXPECT_EQ(c.items[i].verdict, expected[i]) << c.items[i].op.name;
  }
  // The noisy item moved 10% but its noise threshold is 3 x sqrt(2) x 5% = 21%.
  EXPECT_NEAR(c.items[3].threshold, 3 * std::sqrt(2.0) * 0.05, 1e-12);
  EXPECT_EQ(c.faster, 1);
  EXPECT_EQ(c.slower, 1);
  EXPECT_EQ(c.same, 2);
  ASSERT_EQ(c.only_in_a.size(), 1u);
  EXPECT_NE(c.only_in_a[0].find("only_a"), std::string::npos);
  ASSERT_EQ(c.context_diffs.size(), 1u);
  EXPECT_EQ(c.context_diffs[0], "cuBLASLt: 13.0.2 -> 13.1.0");
  // bf16 is complete in both: per-layer ratio (1.1+0.9+1.01+1.1)/4.
  ASSERT_EQ(c.layers.size(), 1u);
  EXPECT_NEAR(c.layers[0].ratio, (1.10 + 0.90 + 1.01 + 1.10) / 4.0, 1e-12);
  const std::string text = RenderComparison(c, 1, 2);
  EXPECT_NE(text.find("4 matched items: 1 faster, 2 same, 1 slower in B"), std::string::npos);
}

TEST(CompareReportsTest, MatchesOnModeAndGroupsToo) {
  auto [a, b] = Jobs();
  for (auto& item : b.items) item.item.mode = Mode::kPrequant;
  EXPECT_TRUE(CompareReports(a, b).items.empty());
  auto [c, d] = Jobs();
  for (auto& item : d.items) item.item.op.groups = 8;
  EXPECT_TRUE(CompareReports(c, d).items.empty());
}

}  // namespace
}  // namespace gemmprof::client::render
