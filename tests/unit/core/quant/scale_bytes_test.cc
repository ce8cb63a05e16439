// ScaleBytes against the scale grids the host quantizers produce (core/quant/quant.h):
// the byte count of each recipe's scales for whole and ragged tensors, and zero for the
// per-tensor recipes and empty tensors.
#include "core/quant/scale_bytes.h"

#include <gtest/gtest.h>

#include <vector>

#include "core/quant/quant.h"

namespace gemmprof::core::quant {
namespace {

std::vector<float> Ones(int64_t rows, int64_t cols) {
  return std::vector<float>(static_cast<size_t>(rows * cols), 1.0f);
}

TEST(ScaleBytesTest, MatchesTheHostQuantizersScaleGrids) {
  struct Shape {
    int64_t rows, cols;
  };
  for (const Shape s : {Shape{256, 512}, Shape{7, 33}, Shape{131, 257}, Shape{1, 1}}) {
    SCOPED_TRACE(std::to_string(s.rows) + "x" + std::to_string(s.cols));
    const auto x = Ones(s.rows, s.cols);
    EXPECT_EQ(ScaleBytes(Recipe::kFp8Block, s.rows, s.cols, /*weight=*/false),
              4.0 * QuantizeBlock(x, s.rows, s.cols, 1, true).scale_inv.size());
    EXPECT_EQ(ScaleBytes(Recipe::kFp8Block, s.rows, s.cols, /*weight=*/true),
              4.0 * QuantizeBlock(x, s.rows, s.cols, 128, true).scale_inv.size());
    EXPECT_EQ(ScaleBytes(Recipe::kMxfp8, s.rows, s.cols, false),
              static_cast<double>(QuantizeMxfp8(x, s.rows, s.cols).scales.size()));
    EXPECT_EQ(ScaleBytes(Recipe::kNvfp4, s.rows, s.cols, false),
              static_cast<double>(QuantizeNvfp4(x, s.rows, s.cols).scales.size()));
    EXPECT_EQ(ScaleBytes(Recipe::kFp8Rowwise, s.rows, s.cols, false),
              4.0 * QuantizeRowwise(x, s.rows, s.cols, Fp8Format::kE4M3).scale_inv.size());
  }
}

TEST(ScaleBytesTest, CountsPerRecipe) {
  // A seed 5B activation, 15872 x 4096: 1/32 B per element for 1x128 fp32 scales, 1/32
  // for UE8M0 per 32, 1/16 for E4M3 per 16.
  const int64_t r = 15872, c = 4096;
  EXPECT_EQ(ScaleBytes(Recipe::kFp8Block, r, c, false), 4.0 * r * 32);
  EXPECT_EQ(ScaleBytes(Recipe::kFp8Block, c, c, true), 4.0 * 32 * 32);
  EXPECT_EQ(ScaleBytes(Recipe::kMxfp8, r, c, false), 1.0 * r * 128);
  EXPECT_EQ(ScaleBytes(Recipe::kNvfp4, r, c, false), 1.0 * r * 256);
  EXPECT_EQ(ScaleBytes(Recipe::kInt8Rowwise, r, c, false), 4.0 * r);
  EXPECT_EQ(ScaleBytes(Recipe::kW8a16, c, c, true), 2.0 * c);
  EXPECT_EQ(ScaleBytes(Recipe::kW4a16, c, c, true), 2.0 * c * 32);
  EXPECT_EQ(ScaleBytes(Recipe::kW4a16, c, c, true, 64), 2.0 * c * 64);
  EXPECT_EQ(ScaleBytes(Recipe::kW4a16, c, 100, true, 64), 2.0 * c * 2);  // a partial group
}

TEST(ScaleBytesTest, PerTensorRecipesAndEmptyTensorsCountNothing) {
  for (Recipe r : {Recipe::kBf16, Recipe::kFp8Current, Recipe::kFp8Delayed}) {
    EXPECT_EQ(ScaleBytes(r, 4096, 4096, false), 0.0) << ToString(r);
  }
  EXPECT_EQ(ScaleBytes(Recipe::kFp8Block, 0, 4096, false), 0.0);
  EXPECT_EQ(ScaleBytes(Recipe::kMxfp8, 4096, 0, false), 0.0);
  EXPECT_EQ(ScaleBytes(Recipe::kW4a16, 16, 16, true, 0), 0.0);  // no group: nothing
}

}  // namespace
}  // namespace gemmprof::core::quant
