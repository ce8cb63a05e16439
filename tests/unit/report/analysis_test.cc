// Per-layer and full-model sums of the fixtures, checked against values computed by hand.
#include "report/analysis.h"

#include <gtest/gtest.h>

#include "core/derive.h"
#include "tests/unit/report/report_fixtures.h"

namespace gemmprof::report {
namespace {

using core::Mode;
using core::Recipe;

// Per-layer and full-model bf16 time of the Hopper fixture, from first principles.
TEST(AnalysisTest, TotalsFollowLayersAndOncePerModelOps) {
  const core::Report report = testing::HopperReport();
  const Analysis a(report);
  double layer = 0, once = 0;
  for (const core::GemmOp& op : report.job.plan.ops) {
    double ms = testing::MsAt(op.Flops(), 600);
    if (op.pass == core::Pass::kDgrad) ms *= 1.08;
    (op.per_layer ? layer : once) += ms;
  }
  const Totals* t = a.FindTotals({Recipe::kBf16, Mode::kAutocast});
  ASSERT_NE(t, nullptr);
  EXPECT_TRUE(t->complete());
  EXPECT_NEAR(t->LayerMs(), layer, 1e-9);
  EXPECT_NEAR(t->once_ms, once, 1e-9);
  EXPECT_NEAR(t->ModelMs(), layer * 2 + once, 1e-9);  // 2 layers + the LM head once
  const Totals* mx = a.FindTotals({Recipe::kMxfp8, Mode::kAutocast});
  ASSERT_NE(mx, nullptr);
  EXPECT_FALSE(mx->complete());
  EXPECT_EQ(a.CompleteRecipes(Mode::kAutocast),
            (std::vector<core::RecipeVariant>{Recipe::kBf16, Recipe::kFp8Current,
                                              Recipe::kFp8Delayed, Recipe::kFp8Block}));
  const auto s = a.ModelSpeedup(Recipe::kFp8Current, Recipe::kBf16, Mode::kAutocast);
  ASSERT_TRUE(s.has_value());
  EXPECT_NEAR(*s, t->ModelMs() / a.FindTotals({Recipe::kFp8Current, Mode::kAutocast})->ModelMs(),
              1e-12);
  EXPECT_GT(*s, 1.0);
}

TEST(AnalysisTest, GroupedOpsCountOnceAndLayersMultiply) {
  core::Report r;
  r.job.plan.num_layers = 4;
  core::GemmOp experts{"expert_up", core::Pass::kFprop, {128, 64, 256}, 8, 3, true};
  core::GemmOp dense{"mlp_up", core::Pass::kFprop, {128, 64, 256}, 1, 1, true};
  for (const auto& op : {experts, dense}) {
    core::ItemRecord item;
    item.item.op = op;
    item.status = core::ItemStatus::kDone;
    item.result = core::Measurement{};
    item.result->time.median_ms = op.groups > 1 ? 2.0 : 1.0;
    r.items.push_back(item);
  }
  const Analysis a(r);
  const Totals* t = a.FindTotals({Recipe::kBf16, Mode::kAutocast});
  ASSERT_NE(t, nullptr);
  EXPECT_DOUBLE_EQ(t->ModelMs(), 2.0 * 3 + 1.0 * 1);
  EXPECT_DOUBLE_EQ(t->LayerMs(), (2.0 * 3 + 1.0) / 4);  // the average layer
}

TEST(ReportAnalysisTest, SweepSumsForwardTimePerM) {
  const core::Report report = testing::SweepReport();
  const Analysis a(report);
  ASSERT_TRUE(a.is_sweep());
  EXPECT_EQ(a.sweep_ms(), (std::vector<int64_t>{1, 16}));
  double expected = 0;
  for (const core::GemmOp& op : report.job.plan.ops)
    if (core::SweepM(op.name) == 16) expected += testing::MsAt(op.Flops(), 600) * op.layers;
  const auto ms = a.SweepModelMs(16, {Recipe::kBf16, Mode::kAutocast});
  ASSERT_TRUE(ms.has_value());
  EXPECT_NEAR(*ms, expected, 1e-12);
  EXPECT_EQ(core::SweepM("attn_out+mlp_down@m=16"), 16);
  EXPECT_EQ(core::SweepM("qkv"), std::nullopt);
}

// A variant naming fast accumulation reads its own items where its setting differs from
// the job's option (here dgrad and wgrad of "all" under the default, fprop fast), and the
// recipe's items elsewhere; its own items never show as the whole recipe's.
TEST(AnalysisTest, FastAccumVariantReadsItsOwnItemsWhereItsSettingDiffers) {
  core::Report report = testing::FastAccumVariantReport();
  const core::RecipeVariant all = report.job.spec.variants.at(0);
  const Analysis a(report);
  EXPECT_EQ(a.recipes(),
            (std::vector<core::RecipeVariant>{core::RecipeVariant(Recipe::kFp8Current), all}));
  for (const GemmRow& row : a.rows()) {
    const core::ItemRecord* whole = row.Item({Recipe::kFp8Current, Mode::kAutocast});
    const core::ItemRecord* mine = row.Item({all, Mode::kAutocast});
    ASSERT_NE(whole, nullptr);
    ASSERT_NE(mine, nullptr);
    EXPECT_EQ(whole->item.fast_accum, core::FastAccum::kDefault);
    if (row.op.pass == core::Pass::kFprop) {
      EXPECT_EQ(mine, whole);
    } else {
      EXPECT_EQ(mine->item.fast_accum, core::FastAccum::kOn);
      EXPECT_DOUBLE_EQ(*row.TimeMs({all, Mode::kAutocast}),
                       0.5 * *row.TimeMs({Recipe::kFp8Current, Mode::kAutocast}));
    }
  }
  const Totals* v = a.FindTotals({all, Mode::kAutocast});
  const Totals* fp8 = a.FindTotals({Recipe::kFp8Current, Mode::kAutocast});
  ASSERT_NE(v, nullptr);
  ASSERT_NE(fp8, nullptr);
  ASSERT_TRUE(v->complete());
  ASSERT_TRUE(fp8->complete());
  EXPECT_DOUBLE_EQ(v->layer_ms[0], fp8->layer_ms[0]);
  EXPECT_NEAR(v->layer_ms[1], 0.5 * fp8->layer_ms[1], 1e-12);
  EXPECT_NEAR(v->layer_ms[2], 0.5 * fp8->layer_ms[2], 1e-12);

  // Under --fast-accum on the same variant is the whole recipe in every pass.
  report.job.spec.timing.fast_accum = core::FastAccum::kOn;
  const Analysis on(report);
  for (const GemmRow& row : on.rows())
    EXPECT_EQ(row.Item({all, Mode::kAutocast}), row.Item({Recipe::kFp8Current, Mode::kAutocast}));
}

// A variant's totals are composed from the items of the recipes its passes run: fprop and
// dgrad from fp8-current's items, wgrad from bf16's. A job naming variants shows only the
// whole recipes it named (bf16's items answer the variant's wgrad without a column).
TEST(AnalysisTest, VariantTotalsAreComposedFromTheirPassesRecipes) {
  core::Report report = testing::HopperReport();
  const Analysis all(report);  // every recipe whole, as the fixture's spec names them
  const core::RecipeVariant hp_wgrad = *core::ParseRecipeVariant("fp8-current+wgrad:bf16");
  report.job.spec.recipes = {Recipe::kFp8Current};
  report.job.spec.variants = {hp_wgrad};
  const Analysis a(report);
  EXPECT_EQ(a.recipes(),
            (std::vector<core::RecipeVariant>{core::RecipeVariant(Recipe::kFp8Current), hp_wgrad}));
  EXPECT_EQ(a.item_recipes(), all.item_recipes());
  EXPECT_EQ(a.FindTotals({Recipe::kBf16, Mode::kAutocast}), nullptr);

  const Totals* v = a.FindTotals({hp_wgrad, Mode::kAutocast});
  const Totals* fp8 = all.FindTotals({Recipe::kFp8Current, Mode::kAutocast});
  const Totals* bf16 = all.FindTotals({Recipe::kBf16, Mode::kAutocast});
  ASSERT_NE(v, nullptr);
  ASSERT_TRUE(v->complete());
  EXPECT_EQ(v->expected_items, fp8->expected_items);
  EXPECT_DOUBLE_EQ(v->layer_ms[0], fp8->layer_ms[0]);
  EXPECT_DOUBLE_EQ(v->layer_ms[1], fp8->layer_ms[1]);
  EXPECT_DOUBLE_EQ(v->layer_ms[2], bf16->layer_ms[2]);
  EXPECT_NE(v->layer_ms[2], fp8->layer_ms[2]);
  // The LM head runs once per model in every pass; its wgrad is bf16's too.
  double once = 0;
  for (const GemmRow& row : all.rows()) {
    if (row.op.per_layer) continue;
    once += *row.TimeMs(
        {row.op.pass == core::Pass::kWgrad ? Recipe::kBf16 : Recipe::kFp8Current, Mode::kAutocast});
  }
  EXPECT_NEAR(v->once_ms, once, 1e-12);

  // A GEMM's cell of the variant is the item of its pass's recipe.
  for (const GemmRow& row : a.rows()) {
    const Recipe expected = row.op.pass == core::Pass::kWgrad ? Recipe::kBf16 : Recipe::kFp8Current;
    ASSERT_NE(row.Item({hp_wgrad, Mode::kAutocast}), nullptr);
    EXPECT_EQ(row.Item({hp_wgrad, Mode::kAutocast})->item.recipe, expected);
  }
  // Against its base, fprop and dgrad are the same items (ratio 1); wgrad is not.
  Scope fd;
  fd.passes = {true, true, false};
  EXPECT_DOUBLE_EQ(
      a.TotalRatio({hp_wgrad, Mode::kAutocast}, {Recipe::kFp8Current, Mode::kAutocast}, fd).center,
      1.0);
  const auto speedup = a.ModelSpeedup(hp_wgrad, Recipe::kFp8Current, Mode::kAutocast);
  ASSERT_TRUE(speedup.has_value());
  EXPECT_NEAR(*speedup, fp8->ModelMs() / v->ModelMs(), 1e-12);
  EXPECT_FALSE(a.SameWork({hp_wgrad, Mode::kAutocast}, {Recipe::kFp8Current, Mode::kAutocast}));
}

}  // namespace
}  // namespace gemmprof::report
