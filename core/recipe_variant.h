// A recipe with a precision per GEMM role: "fp8-rowwise+wgrad:bf16" runs fprop and dgrad
// in fp8-rowwise and the weight gradient in bf16 (torchao's row-wise recipe with a
// high-precision wgrad). Such a variant measures nothing of its own: each of its GEMMs is
// the item of the recipe its pass runs, so its totals are composed from those items (the
// same GPU work, the same cache entries) and reports show it beside the whole recipes.
// "fp8-current+fast-accum:fprop/dgrad" names the accumulation per pass instead of the job's
// --fast-accum: the passes named accumulate fast, the others split; its GEMMs whose
// setting differs from what the job's option gives them are items of their own (ItemFor).
// A whole recipe is a variant without overrides (the implicit conversion below).
#pragma once

#include <array>
#include <compare>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "core/enums.h"

namespace gemmprof::core {

struct RecipeVariant {
  Recipe base = Recipe::kBf16;
  // By Pass (fprop, dgrad, wgrad): the recipe that pass runs, nullopt for the base.
  std::array<std::optional<Recipe>, 3> pass_recipe{};
  // By Pass: kOn / kOff when the variant names fast accumulation ("+fast-accum:..."), all
  // kDefault (the job's --fast-accum) when it does not.
  std::array<FastAccum, 3> pass_fast_accum{};

  RecipeVariant() = default;
  // A whole recipe. Implicit on purpose: every place that takes a variant takes a recipe.
  RecipeVariant(Recipe recipe) : base(recipe) {}  // NOLINT(google-explicit-constructor)

  // The recipe `pass` runs.
  Recipe For(Pass pass) const;
  // The fast-accumulation setting of `pass`: kDefault unless the variant names it.
  FastAccum FastAccumFor(Pass pass) const;
  // True when the variant names fast accumulation per pass.
  bool sets_fast_accum() const;
  // True when the variant is not a whole recipe: some pass runs another recipe than the
  // base, or it names fast accumulation.
  bool composite() const;
  // Canonical name: the base, then "+pass:recipe" per override in fprop, dgrad, wgrad
  // order ("fp8-rowwise+wgrad:bf16"), then "+fast-accum:" with the fast passes joined by
  // "/" in that order ("all" for the three, "none" for none); a whole recipe's own name.
  std::string Name() const;
  // "fprop fp8-rowwise, dgrad fp8-rowwise, wgrad bf16": what each pass runs, in words
  // (with "fast" or "split accumulation" after a pass whose setting the variant names).
  std::string Describe() const;

  // Whole recipes in canonical recipe order, each followed by its variants.
  friend auto operator<=>(const RecipeVariant&, const RecipeVariant&) = default;
};

// What a variant's autocast total (training-step accounting) counts differently from a
// step that runs it, in words, or "" when nothing: a recipe that shares quantized operands
// across passes (SharesQuantizationAcrossPasses) but runs in some of the variant's passes
// only has its quantization counted as its own step attributes it (transposed copies
// written for passes the variant runs in another recipe are counted; copies a pass would
// read from a pass the variant runs in another recipe are not quantized again).
std::string SplitQuantizationNote(const RecipeVariant& v);

// Which item answers a variant's GEMM of `pass` in a job whose --fast-accum is `job_option`:
// the recipe the pass runs, and the item's own fast-accumulation setting (WorkItem::
// fast_accum): kDefault, the recipe's item under the job's option, unless the variant names
// the pass's accumulation and that differs from what the job's option gives the pass.
struct PassItem {
  Recipe recipe = Recipe::kBf16;
  FastAccum fast_accum = FastAccum::kDefault;
  friend bool operator==(const PassItem&, const PassItem&) = default;
};
PassItem ItemFor(const RecipeVariant& v, Pass pass, FastAccum job_option);

// The name of a variant (RecipeVariant::Name()).
std::string ToString(const RecipeVariant& v);

// Parses a recipe name with optional per-pass overrides: BASE(+PASS:RECIPE)*, PASS one of
// fprop, dgrad, wgrad, each at most once and other than the base; a serving recipe
// (fprop only) cannot be given to dgrad or wgrad. At most one "+fast-accum:PASSES",
// PASSES passes joined by "/" ("fprop/wgrad"), "all" or "none": those passes accumulate
// fast, the others split; each pass named must run a recipe with an FP8 accumulation
// setting (HasFastAccumChoice). The error names the part that is wrong and the valid
// values, without a field prefix (the caller names its field).
absl::StatusOr<RecipeVariant> ParseRecipeVariant(std::string_view name);

}  // namespace gemmprof::core
