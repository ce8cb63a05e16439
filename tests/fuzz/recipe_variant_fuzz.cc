// --recipes entries (core/recipe_variant.h): what parses has a canonical name that parses
// back to the same variant, and every pass names a recipe the variant can run.
#include "core/recipe_variant.h"
#include "tests/fuzz/fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace gemmprof::core;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto variant = ParseRecipeVariant(text);
  if (!variant.ok()) {
    FUZZ_CHECK(absl::IsInvalidArgument(variant.status()));
    FUZZ_CHECK(!variant.status().message().empty());
    return 0;
  }
  const std::string name = variant->Name();
  auto again = ParseRecipeVariant(name);
  FUZZ_CHECK(again.ok());
  FUZZ_CHECK(*again == *variant);
  FUZZ_CHECK(again->Name() == name);
  FUZZ_CHECK(!variant->Describe().empty());
  for (Pass p : {Pass::kFprop, Pass::kDgrad, Pass::kWgrad}) {
    (void)ItemFor(*variant, p, FastAccum::kDefault);
    (void)ItemFor(*variant, p, FastAccum::kOn);
    (void)ItemFor(*variant, p, FastAccum::kOff);
  }
  (void)SplitQuantizationNote(*variant);
  return 0;
}
