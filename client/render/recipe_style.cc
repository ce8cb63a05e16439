#include "client/render/recipe_style.h"

#include <cstdio>

namespace gemmprof::client::render {

Rgb RecipeRgb(core::Recipe recipe) {
  switch (recipe) {
    case core::Recipe::kBf16:
      return {0x5b, 0x67, 0x70};
    case core::Recipe::kFp8Current:
      return {0x1f, 0x77, 0xb4};
    case core::Recipe::kFp8Delayed:
      return {0x17, 0xbe, 0xcf};
    case core::Recipe::kFp8Block:
      return {0x2c, 0xa0, 0x2c};
    case core::Recipe::kMxfp8:
      return {0xff, 0x7f, 0x0e};
    case core::Recipe::kNvfp4:
      return {0xd6, 0x27, 0x28};
    case core::Recipe::kFp8Rowwise:
      return {0x94, 0x67, 0xbd};
    case core::Recipe::kInt8Rowwise:
      return {0x8c, 0x56, 0x4b};
    case core::Recipe::kW8a16:
      return {0xe3, 0x77, 0xc2};
    case core::Recipe::kW4a16:
      return {0xbc, 0xbd, 0x22};
  }
  return {0, 0, 0};
}

Rgb RecipeRgb(const core::RecipeVariant& recipe) {
  const Rgb base = RecipeRgb(recipe.base);
  if (!recipe.composite()) return base;
  Rgb other = base;
  for (const auto& r : recipe.pass_recipe) {
    if (r) {
      other = RecipeRgb(*r);
      break;
    }
  }
  auto mix = [](uint8_t a, uint8_t b) { return static_cast<uint8_t>(0.8 * (0.6 * a + 0.4 * b)); };
  return {mix(base.r, other.r), mix(base.g, other.g), mix(base.b, other.b)};
}

std::string HexColor(Rgb c) {
  char buf[8];
  std::snprintf(buf, sizeof(buf), "#%02x%02x%02x", c.r, c.g, c.b);
  return buf;
}

std::string RecipeColor(const core::RecipeVariant& recipe) { return HexColor(RecipeRgb(recipe)); }

}  // namespace gemmprof::client::render
