// A minimal PNG decoder for the chart tests: 8-bit RGB/RGBA, non-interlaced, the
// output of rsvg-convert. Not a general PNG reader.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/status.h"

namespace gemmprof::client::testing {

struct Image {
  int width = 0, height = 0;
  std::vector<uint8_t> rgba;  // width * height * 4, row-major

  const uint8_t* Pixel(int x, int y) const { return &rgba[(size_t(y) * width + x) * 4]; }
};

// Decodes `bytes`. Errors: InvalidArgument for anything but 8-bit RGB/RGBA,
// non-interlaced PNG, or corrupt data.
absl::StatusOr<Image> DecodePng(const std::string& bytes);

}  // namespace gemmprof::client::testing
