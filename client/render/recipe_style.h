// One fixed colour per recipe, shared by every chart so a recipe looks the same
// everywhere. Pure.
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include "core/enums.h"
#include "core/recipe_variant.h"

namespace gemmprof::client::render {

// 8-bit sRGB.
struct Rgb {
  uint8_t r = 0, g = 0, b = 0;
  friend bool operator==(const Rgb&, const Rgb&) = default;
};

// The recipe's colour; distinct for every recipe and from the chart's greys. A variant
// with a recipe per pass takes its base's colour blended with its first override's
// recipe colour and darkened, so it reads as its base's kin and apart from it.
Rgb RecipeRgb(core::Recipe recipe);
Rgb RecipeRgb(const core::RecipeVariant& recipe);
// "#rrggbb".
std::string RecipeColor(const core::RecipeVariant& recipe);
std::string HexColor(Rgb rgb);

// Opacity of the secondary segment of a bar (Wgrad, prequant): same hue, lighter.
inline constexpr double kSecondaryOpacity = 0.45;

}  // namespace gemmprof::client::render
