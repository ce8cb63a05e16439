#include "core/recipe_variant.h"

#include <gtest/gtest.h>

#include <string>

namespace gemmprof::core {
namespace {

std::string Error(std::string_view name) {
  absl::StatusOr<RecipeVariant> v = ParseRecipeVariant(name);
  EXPECT_FALSE(v.ok()) << name;
  return v.ok() ? "" : std::string(v.status().message());
}

TEST(RecipeVariantTest, WholeRecipesParseAsVariantsWithoutOverrides) {
  for (Recipe r : AllRecipes()) {
    absl::StatusOr<RecipeVariant> v = ParseRecipeVariant(ToString(r));
    ASSERT_TRUE(v.ok()) << ToString(r);
    EXPECT_FALSE(v->composite());
    EXPECT_EQ(*v, RecipeVariant(r));
    EXPECT_EQ(v->Name(), ToString(r));
    for (Pass p : {Pass::kFprop, Pass::kDgrad, Pass::kWgrad}) EXPECT_EQ(v->For(p), r);
  }
}

TEST(RecipeVariantTest, OverridesGiveTheirPassAnotherRecipe) {
  absl::StatusOr<RecipeVariant> v = ParseRecipeVariant("fp8-rowwise+wgrad:bf16");
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_TRUE(v->composite());
  EXPECT_EQ(v->base, Recipe::kFp8Rowwise);
  EXPECT_EQ(v->For(Pass::kFprop), Recipe::kFp8Rowwise);
  EXPECT_EQ(v->For(Pass::kDgrad), Recipe::kFp8Rowwise);
  EXPECT_EQ(v->For(Pass::kWgrad), Recipe::kBf16);
  EXPECT_EQ(v->Name(), "fp8-rowwise+wgrad:bf16");
  EXPECT_EQ(ToString(*v), "fp8-rowwise+wgrad:bf16");
  EXPECT_EQ(v->Describe(), "fprop fp8-rowwise, dgrad fp8-rowwise, wgrad bf16");

  // Parts in any order; the name puts them in pass order, so equal variants read alike.
  absl::StatusOr<RecipeVariant> two = ParseRecipeVariant("bf16+wgrad:fp8-block+fprop:fp8-current");
  ASSERT_TRUE(two.ok()) << two.status();
  EXPECT_EQ(two->Name(), "bf16+fprop:fp8-current+wgrad:fp8-block");
  EXPECT_EQ(two->For(Pass::kDgrad), Recipe::kBf16);
  EXPECT_EQ(*ParseRecipeVariant(two->Name()), *two);
  // A serving recipe may take fprop.
  EXPECT_TRUE(ParseRecipeVariant("bf16+fprop:w4a16").ok());
}

TEST(RecipeVariantTest, OrderPutsEachRecipeBeforeItsVariants) {
  const RecipeVariant rowwise(Recipe::kFp8Rowwise);
  const RecipeVariant hp_wgrad = *ParseRecipeVariant("fp8-rowwise+wgrad:bf16");
  const RecipeVariant bf16(Recipe::kBf16);
  const RecipeVariant bf16_fp8_fprop = *ParseRecipeVariant("bf16+fprop:fp8-current");
  EXPECT_LT(bf16, bf16_fp8_fprop);
  EXPECT_LT(bf16_fp8_fprop, rowwise);
  EXPECT_LT(rowwise, hp_wgrad);
  EXPECT_TRUE(rowwise == Recipe::kFp8Rowwise);
  EXPECT_TRUE(hp_wgrad != Recipe::kFp8Rowwise);
}

// Composing is exact unless a recipe that shares quantized operands across passes runs in
// some passes only.
TEST(RecipeVariantTest, SplitQuantizationIsNamedWhereTheTotalCountsItAsAWholeStep) {
  EXPECT_EQ(SplitQuantizationNote(*ParseRecipeVariant("fp8-rowwise+wgrad:bf16")), "");
  EXPECT_EQ(SplitQuantizationNote(RecipeVariant(Recipe::kFp8Current)), "");
  EXPECT_EQ(SplitQuantizationNote(*ParseRecipeVariant("bf16+fprop:fp8-rowwise")), "");
  const std::string split = SplitQuantizationNote(*ParseRecipeVariant("fp8-current+wgrad:bf16"));
  EXPECT_EQ(split.rfind("fp8-current shares quantized operands across a training step's passes", 0),
            0u)
      << split;
  EXPECT_NE(split.find("prequant, dynamic and --accounting per-gemm totals are exact"),
            std::string::npos);
  EXPECT_EQ(SplitQuantizationNote(*ParseRecipeVariant("fp8-block+dgrad:fp8-delayed"))
                .rfind("fp8-delayed, fp8-block share quantized operands", 0),
            0u);
  EXPECT_TRUE(SharesQuantizationAcrossPasses(Recipe::kNvfp4));
  EXPECT_FALSE(SharesQuantizationAcrossPasses(Recipe::kFp8Rowwise));
  EXPECT_FALSE(SharesQuantizationAcrossPasses(Recipe::kW4a16));
}

TEST(RecipeVariantTest, FastAccumNamesTheFastPassesAndSplitsTheOthers) {
  absl::StatusOr<RecipeVariant> v = ParseRecipeVariant("fp8-current+fast-accum:wgrad/fprop");
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_TRUE(v->composite());
  EXPECT_TRUE(v->sets_fast_accum());
  EXPECT_EQ(v->FastAccumFor(Pass::kFprop), FastAccum::kOn);
  EXPECT_EQ(v->FastAccumFor(Pass::kDgrad), FastAccum::kOff);
  EXPECT_EQ(v->FastAccumFor(Pass::kWgrad), FastAccum::kOn);
  EXPECT_EQ(v->Name(), "fp8-current+fast-accum:fprop/wgrad");
  EXPECT_EQ(v->Describe(),
            "fprop fp8-current (fast accumulation), dgrad fp8-current (split accumulation), "
            "wgrad fp8-current (fast accumulation)");
  EXPECT_EQ(*ParseRecipeVariant(v->Name()), *v);
  EXPECT_NE(*v, RecipeVariant(Recipe::kFp8Current));

  EXPECT_EQ(ParseRecipeVariant("fp8-current+fast-accum:fprop/dgrad/wgrad")->Name(),
            "fp8-current+fast-accum:all");
  EXPECT_EQ(*ParseRecipeVariant("fp8-current+fast-accum:fprop/dgrad/wgrad"),
            *ParseRecipeVariant("fp8-current+fast-accum:all"));
  absl::StatusOr<RecipeVariant> none = ParseRecipeVariant("fp8-rowwise+fast-accum:none");
  ASSERT_TRUE(none.ok()) << none.status();
  EXPECT_EQ(none->Name(), "fp8-rowwise+fast-accum:none");
  EXPECT_TRUE(none->composite());
  for (Pass p : {Pass::kFprop, Pass::kDgrad, Pass::kWgrad})
    EXPECT_EQ(none->FastAccumFor(p), FastAccum::kOff);

  // With a recipe per pass: only the passes running a recipe with the setting may be fast;
  // the others (here wgrad in bf16) read as split and are described without it.
  absl::StatusOr<RecipeVariant> mixed =
      ParseRecipeVariant("fp8-rowwise+fast-accum:dgrad+wgrad:bf16");
  ASSERT_TRUE(mixed.ok()) << mixed.status();
  EXPECT_EQ(mixed->Name(), "fp8-rowwise+wgrad:bf16+fast-accum:dgrad");
  EXPECT_EQ(mixed->Describe(),
            "fprop fp8-rowwise (split accumulation), dgrad fp8-rowwise (fast accumulation), "
            "wgrad bf16");
  // fp8-block in some pass is fine while no fast pass runs it.
  EXPECT_TRUE(ParseRecipeVariant("fp8-current+wgrad:fp8-block+fast-accum:dgrad").ok());
}

// A variant's pass shares the recipe's item when its setting resolves as the job's does.
TEST(RecipeVariantTest, ItemForSharesTheRecipesItemUnlessTheSettingDiffers) {
  const RecipeVariant fprop_only = *ParseRecipeVariant("fp8-current+fast-accum:fprop");
  const RecipeVariant all = *ParseRecipeVariant("fp8-current+fast-accum:all");
  const PassItem shared{Recipe::kFp8Current, FastAccum::kDefault};
  // The job's default is Transformer Engine's: fprop fast, the others split.
  for (Pass p : {Pass::kFprop, Pass::kDgrad, Pass::kWgrad})
    EXPECT_EQ(ItemFor(fprop_only, p, FastAccum::kDefault), shared) << ToString(p);
  EXPECT_EQ(ItemFor(all, Pass::kFprop, FastAccum::kDefault), shared);
  EXPECT_EQ(ItemFor(all, Pass::kDgrad, FastAccum::kDefault),
            (PassItem{Recipe::kFp8Current, FastAccum::kOn}));
  EXPECT_EQ(ItemFor(all, Pass::kWgrad, FastAccum::kDefault),
            (PassItem{Recipe::kFp8Current, FastAccum::kOn}));
  // Under --fast-accum on every pass of "all" is the recipe's item, and fprop-only's
  // backward passes are its own (split).
  for (Pass p : {Pass::kFprop, Pass::kDgrad, Pass::kWgrad})
    EXPECT_EQ(ItemFor(all, p, FastAccum::kOn), shared);
  EXPECT_EQ(ItemFor(fprop_only, Pass::kDgrad, FastAccum::kOn),
            (PassItem{Recipe::kFp8Current, FastAccum::kOff}));
  // A pass running a recipe without the setting is always that recipe's item.
  const RecipeVariant mixed = *ParseRecipeVariant("fp8-rowwise+wgrad:bf16+fast-accum:dgrad");
  EXPECT_EQ(ItemFor(mixed, Pass::kWgrad, FastAccum::kDefault),
            (PassItem{Recipe::kBf16, FastAccum::kDefault}));
  EXPECT_EQ(ItemFor(mixed, Pass::kFprop, FastAccum::kDefault),
            (PassItem{Recipe::kFp8Rowwise, FastAccum::kOff}));
  // A whole recipe is its own item in every pass.
  EXPECT_EQ(ItemFor(RecipeVariant(Recipe::kFp8Delayed), Pass::kDgrad, FastAccum::kOff),
            (PassItem{Recipe::kFp8Delayed, FastAccum::kDefault}));
}

TEST(RecipeVariantTest, ResolveFastAccumFollowsTransformerEngine) {
  EXPECT_EQ(ResolveFastAccum(Recipe::kFp8Current, Pass::kFprop, FastAccum::kDefault), true);
  EXPECT_EQ(ResolveFastAccum(Recipe::kFp8Delayed, Pass::kDgrad, FastAccum::kDefault), false);
  EXPECT_EQ(ResolveFastAccum(Recipe::kFp8Rowwise, Pass::kWgrad, FastAccum::kOn), true);
  EXPECT_EQ(ResolveFastAccum(Recipe::kFp8Current, Pass::kFprop, FastAccum::kOff), false);
  EXPECT_EQ(ResolveFastAccum(Recipe::kFp8Block, Pass::kFprop, FastAccum::kOn), false);
  EXPECT_EQ(ResolveFastAccum(Recipe::kBf16, Pass::kFprop, FastAccum::kOn), std::nullopt);
  EXPECT_EQ(ResolveFastAccum(Recipe::kMxfp8, Pass::kFprop, FastAccum::kDefault), std::nullopt);
  EXPECT_EQ(ResolveFastAccum(Recipe::kW4a16, Pass::kFprop, FastAccum::kOn), std::nullopt);
}

// Every malformed form names the part that is wrong and what would be valid.
TEST(RecipeVariantTest, BadNamesSayWhichPartIsWrong) {
  EXPECT_EQ(Error("fp16"), "unknown recipe \"fp16\"; valid: " + RecipeList());
  EXPECT_EQ(Error(""), "unknown recipe \"\"; valid: " + RecipeList());
  EXPECT_EQ(Error("fp8-rowwis+wgrad:bf16"),
            "unknown recipe \"fp8-rowwis\" in \"fp8-rowwis+wgrad:bf16\"; valid: " + RecipeList());
  EXPECT_EQ(Error("+wgrad:bf16"), "unknown recipe \"\" in \"+wgrad:bf16\"; valid: " + RecipeList());
  EXPECT_EQ(Error("fp8-rowwise+wgard:bf16"),
            "\"+wgard:bf16\" in \"fp8-rowwise+wgard:bf16\": unknown role \"wgard\"; a role is a "
            "pass: fprop, dgrad or wgrad (as in \"+wgrad:bf16\")");
  EXPECT_EQ(Error("fp8-rowwise+"),
            "\"+\" in \"fp8-rowwise+\": unknown role \"\"; a role is a pass: fprop, dgrad or "
            "wgrad (as in \"+wgrad:bf16\")");
  EXPECT_EQ(Error("fp8-rowwise+wgrad"),
            "\"+wgrad\" in \"fp8-rowwise+wgrad\": a role needs a recipe after \":\" (as in "
            "\"+wgrad:bf16\")");
  EXPECT_EQ(Error("fp8-rowwise+wgrad:bf61"),
            "\"+wgrad:bf61\" in \"fp8-rowwise+wgrad:bf61\": unknown recipe \"bf61\" for wgrad; "
            "valid: " +
                RecipeList());
  EXPECT_EQ(Error("fp8-rowwise+wgrad:bf16+wgrad:fp8-block"),
            "\"+wgrad:fp8-block\" in \"fp8-rowwise+wgrad:bf16+wgrad:fp8-block\": wgrad is given "
            "a recipe twice");
  EXPECT_EQ(Error("fp8-rowwise+dgrad:fp8-rowwise"),
            "\"+dgrad:fp8-rowwise\" in \"fp8-rowwise+dgrad:fp8-rowwise\": dgrad already runs "
            "fp8-rowwise, the base recipe; leave the part out");
  EXPECT_EQ(Error("bf16+wgrad:w4a16"), "\"+wgrad:w4a16\" in \"bf16+wgrad:w4a16\": " +
                                           PassUnsupportedReason(Recipe::kW4a16, Pass::kWgrad));
  const std::string passes = "; valid: fprop, dgrad, wgrad joined by \"/\", or all, or none";
  EXPECT_EQ(Error("fp8-current+fast-accum"),
            "\"+fast-accum\" in \"fp8-current+fast-accum\": fast-accum needs the passes that "
            "accumulate fast after \":\" (as in \"+fast-accum:fprop/wgrad\", or all, or none)");
  EXPECT_EQ(
      Error("fp8-current+fast-accum:"),
      "\"+fast-accum:\" in \"fp8-current+fast-accum:\": no passes after \"fast-accum:\"" + passes);
  EXPECT_EQ(
      Error("fp8-current+fast-accum:fprop/"),
      "\"+fast-accum:fprop/\" in \"fp8-current+fast-accum:fprop/\": unknown pass \"\"" + passes);
  EXPECT_EQ(Error("fp8-current+fast-accum:fprop,dgrad"),
            "\"+fast-accum:fprop,dgrad\" in \"fp8-current+fast-accum:fprop,dgrad\": unknown pass "
            "\"fprop,dgrad\"" +
                passes);
  EXPECT_EQ(Error("fp8-current+fast-accum:all/fprop"),
            "\"+fast-accum:all/fprop\" in \"fp8-current+fast-accum:all/fprop\": unknown pass "
            "\"all\"" +
                passes);
  EXPECT_EQ(Error("fp8-current+fast-accum:wgrad/wgrad"),
            "\"+fast-accum:wgrad/wgrad\" in \"fp8-current+fast-accum:wgrad/wgrad\": wgrad is "
            "named twice");
  EXPECT_EQ(Error("fp8-current+fast-accum:all+fast-accum:none"),
            "\"+fast-accum:none\" in \"fp8-current+fast-accum:all+fast-accum:none\": fast-accum "
            "is given twice");
  EXPECT_EQ(Error("fp8-rowwise+wgrad:bf16+fast-accum:all"),
            "\"+fast-accum:all\" in \"fp8-rowwise+wgrad:bf16+fast-accum:all\": wgrad runs bf16, "
            "which has no FP8 accumulation setting (fast accumulation is a choice of "
            "fp8-current, fp8-delayed, fp8-rowwise)");
  EXPECT_EQ(Error("fp8-block+fast-accum:fprop"),
            "\"+fast-accum:fprop\" in \"fp8-block+fast-accum:fprop\": fprop runs fp8-block, "
            "whose block scaling always splits accumulation (fast accumulation is a choice of "
            "fp8-current, fp8-delayed, fp8-rowwise)");
  EXPECT_EQ(Error("bf16+fast-accum:none"),
            "\"+fast-accum:none\" in \"bf16+fast-accum:none\": no pass runs a recipe with an "
            "FP8 accumulation setting (fp8-current, fp8-delayed, fp8-rowwise)");
  EXPECT_EQ(Error("w4a16+fast-accum:fprop"),
            "\"+fast-accum:fprop\" in \"w4a16+fast-accum:fprop\": fprop runs w4a16, which has no "
            "FP8 accumulation setting (fast accumulation is a choice of fp8-current, "
            "fp8-delayed, fp8-rowwise)");
  // The pass parts are checked against the fast-accum part whatever their order.
  EXPECT_EQ(Error("fp8-current+fast-accum:dgrad+dgrad:mxfp8"),
            "\"+fast-accum:dgrad\" in \"fp8-current+fast-accum:dgrad+dgrad:mxfp8\": dgrad runs "
            "mxfp8, which has no FP8 accumulation setting (fast accumulation is a choice of "
            "fp8-current, fp8-delayed, fp8-rowwise)");
  EXPECT_EQ(Error("fp8-block+fprop:bf16+dgrad:bf16+wgrad:bf16"),
            "\"fp8-block+fprop:bf16+dgrad:bf16+wgrad:bf16\": every pass runs bf16; give that "
            "recipe by its name");
}

}  // namespace
}  // namespace gemmprof::core
