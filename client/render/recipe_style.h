// One fixed colour per recipe, shared by every chart so a recipe looks the same
// everywhere. Pure.
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include "core/enums.h"

namespace gemmprof::client::render {

// 8-bit sRGB.
struct Rgb {
  uint8_t r = 0, g = 0, b = 0;
  friend bool operator==(const Rgb&, const Rgb&) = default;
};

// The recipe's colour; distinct for every recipe and from the chart's greys.
Rgb RecipeRgb(core::Recipe recipe);
// "#rrggbb".
std::string RecipeColor(core::Recipe recipe);
std::string HexColor(Rgb rgb);

// Opacity of the secondary segment of a bar (Wgrad, prequant): same hue, lighter.
inline constexpr double kSecondaryOpacity = 0.45;

}  // namespace gemmprof::client::render
