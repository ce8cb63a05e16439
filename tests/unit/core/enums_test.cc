#include "core/enums.h"

#include <gtest/gtest.h>

#include "core/result.h"

namespace gemmprof::core {
namespace {

TEST(EnumsTest, RecipeNamesRoundTrip) {
  for (Recipe r : AllRecipes()) {
    auto parsed = ParseRecipe(ToString(r));
    ASSERT_TRUE(parsed.has_value()) << ToString(r);
    EXPECT_EQ(*parsed, r);
  }
  EXPECT_FALSE(ParseRecipe("fp16").has_value());
  EXPECT_FALSE(ParseRecipe("").has_value());
  EXPECT_EQ(RecipeList(),
            "bf16, fp8-current, fp8-delayed, fp8-block, mxfp8, nvfp4, fp8-rowwise, int8-rowwise, "
            "w8a16, w4a16");
  EXPECT_FALSE(ParseRecipe("fp8-rowwis").has_value());
}

TEST(EnumsTest, ServingRecipesAreNamedNotDefaultAndFpropOnly) {
  EXPECT_EQ(DefaultRecipes(),
            (std::vector<Recipe>{Recipe::kBf16, Recipe::kFp8Current, Recipe::kFp8Delayed,
                                 Recipe::kFp8Block, Recipe::kMxfp8, Recipe::kNvfp4,
                                 Recipe::kFp8Rowwise}));
  for (Recipe r : {Recipe::kInt8Rowwise, Recipe::kW8a16, Recipe::kW4a16}) {
    EXPECT_TRUE(IsServingRecipe(r));
    EXPECT_EQ(PassUnsupportedReason(r, Pass::kFprop), "");
  }
  EXPECT_FALSE(IsWeightOnly(Recipe::kInt8Rowwise));
  EXPECT_TRUE(IsWeightOnly(Recipe::kW4a16));
  EXPECT_EQ(PassUnsupportedReason(Recipe::kW4a16, Pass::kDgrad),
            "w4a16 is a serving recipe: fprop only (no dgrad form; train with bf16 or an fp8 "
            "recipe)");
  EXPECT_EQ(PassUnsupportedReason(Recipe::kFp8Rowwise, Pass::kWgrad), "");
}

TEST(EnumsTest, ModesAndTimingBackendsRoundTrip) {
  for (Mode m : {Mode::kAutocast, Mode::kPrequant, Mode::kDynamic}) {
    EXPECT_EQ(ParseMode(ToString(m)), m);
  }
  EXPECT_EQ(ToString(Mode::kDynamic), "dynamic");
  EXPECT_FALSE(ParseMode("inference").has_value());
  EXPECT_EQ(ParseTimingBackend("events"), TimingBackend::kEvents);
  EXPECT_EQ(ParseTimingBackend("kernels"), TimingBackend::kKernels);
  EXPECT_FALSE(ParseTimingBackend("cupti").has_value());
}

TEST(EnumsTest, L2PoliciesRoundTripAndSayWhetherTheyFlush) {
  for (L2Policy p : {L2Policy::kHot, L2Policy::kCold, L2Policy::kClean}) {
    EXPECT_EQ(ParseL2Policy(ToString(p)), p);
  }
  EXPECT_EQ(ToString(L2Policy::kClean), "clean");
  EXPECT_FALSE(ParseL2Policy("warm").has_value());
  EXPECT_FALSE(ParseL2Policy("Clean").has_value());
  EXPECT_FALSE(FlushesL2(L2Policy::kHot));
  EXPECT_TRUE(FlushesL2(L2Policy::kCold));
  EXPECT_TRUE(FlushesL2(L2Policy::kClean));
}

TEST(EnumsTest, TerminalStates) {
  EXPECT_FALSE(IsTerminal(JobState::kQueued));
  EXPECT_FALSE(IsTerminal(JobState::kRunning));
  EXPECT_TRUE(IsTerminal(JobState::kCancelled));
  EXPECT_TRUE(IsFinal(ItemStatus::kNotSupported));
  EXPECT_FALSE(IsFinal(ItemStatus::kRunning));
}

TEST(SampleStatsTest, Summarizes) {
  auto s = SampleStats::FromSamples({5, 1, 4, 2, 3});
  EXPECT_EQ(s.count, 5);
  EXPECT_DOUBLE_EQ(s.median_ms, 3);
  EXPECT_DOUBLE_EQ(s.min_ms, 1);
  EXPECT_DOUBLE_EQ(s.max_ms, 5);
  EXPECT_DOUBLE_EQ(s.mean_ms, 3);
  EXPECT_DOUBLE_EQ(s.p20_ms, 1.8);
  EXPECT_NEAR(s.stdev_ms, 1.5811388, 1e-6);
  EXPECT_EQ(SampleStats::FromSamples({}).count, 0);
}

}  // namespace
}  // namespace gemmprof::core
