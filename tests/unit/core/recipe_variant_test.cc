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
  EXPECT_EQ(Error("fp8-current+fast-accum:fprop"),
            "\"+fast-accum:fprop\" in \"fp8-current+fast-accum:fprop\": fast accumulation per "
            "pass is not supported yet (submit --fast-accum on|off sets it for every pass of a "
            "job)");
  EXPECT_EQ(Error("fp8-block+fprop:bf16+dgrad:bf16+wgrad:bf16"),
            "\"fp8-block+fprop:bf16+dgrad:bf16+wgrad:bf16\": every pass runs bf16; give that "
            "recipe by its name");
}

}  // namespace
}  // namespace gemmprof::core
