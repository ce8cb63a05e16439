#include "core/quant/scale_bytes.h"

namespace gemmprof::core::quant {
namespace {

int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

}  // namespace

double ScaleBytes(Recipe recipe, int64_t rows, int64_t cols, bool weight, int64_t w4_group) {
  if (rows <= 0 || cols <= 0) return 0.0;
  const double r = static_cast<double>(rows);
  switch (recipe) {
    case Recipe::kFp8Block:
      return weight ? 4.0 * static_cast<double>(CeilDiv(rows, 128) * CeilDiv(cols, 128))
                    : 4.0 * r * static_cast<double>(CeilDiv(cols, 128));
    case Recipe::kMxfp8:
      return r * static_cast<double>(CeilDiv(cols, 32));
    case Recipe::kNvfp4:
      return r * static_cast<double>(CeilDiv(cols, 16));
    case Recipe::kFp8Rowwise:
    case Recipe::kInt8Rowwise:
      return 4.0 * r;
    case Recipe::kW8a16:
      return 2.0 * r;
    case Recipe::kW4a16:
      return w4_group > 0 ? 2.0 * r * static_cast<double>(CeilDiv(cols, w4_group)) : 0.0;
    case Recipe::kBf16:
    case Recipe::kFp8Current:
    case Recipe::kFp8Delayed:
      return 0.0;
  }
  return 0.0;
}

double QuantizedElementBytes(Recipe recipe) {
  switch (recipe) {
    case Recipe::kBf16:
      return 0.0;
    case Recipe::kNvfp4:
    case Recipe::kW4a16:
      return 0.5;
    case Recipe::kFp8Current:
    case Recipe::kFp8Delayed:
    case Recipe::kFp8Block:
    case Recipe::kMxfp8:
    case Recipe::kFp8Rowwise:
    case Recipe::kInt8Rowwise:
    case Recipe::kW8a16:
      return 1.0;
  }
  return 0.0;
}

QuantizationBytes QuantizationFloorBytes(Recipe recipe, int64_t rows, int64_t cols, bool weight,
                                         bool transposes, int64_t w4_group) {
  QuantizationBytes b;
  if (recipe == Recipe::kBf16 || rows <= 0 || cols <= 0) return b;
  const double n = static_cast<double>(rows) * static_cast<double>(cols);
  const bool amax_pass = recipe == Recipe::kFp8Current || recipe == Recipe::kNvfp4;
  const int copies = transposes && recipe != Recipe::kNvfp4 ? 2 : 1;
  b.data = (amax_pass ? 4.0 : 2.0) * n + copies * QuantizedElementBytes(recipe) * n;
  b.scales = ScaleBytes(recipe, rows, cols, weight, w4_group);
  if (copies == 2) b.scales += ScaleBytes(recipe, cols, rows, weight, w4_group);
  return b;
}

}  // namespace gemmprof::core::quant
