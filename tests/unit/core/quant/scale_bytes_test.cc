// ScaleBytes against the scale grids the host quantizers produce (core/quant/quant.h):
// the byte count of each recipe's scales for whole and ragged tensors, and zero for the
// per-tensor recipes and empty tensors; QuantizationFloorBytes' reads, writes, transposes
// and scales per recipe.
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

TEST(QuantizationFloorBytesTest, CountsReadsWritesTransposesAndScales) {
  // The seed 5B layer's X of the QKV GEMM, 15872 x 4096, and its weight 12288 x 4096.
  const int64_t r = 15872, c = 4096, wn = 12288;
  const double n = static_cast<double>(r) * c;
  struct Case {
    Recipe recipe;
    bool weight, transposes;
    double data, scales;
  };
  const Case cases[] = {
      // fp8-current: the source read twice (amax pass), FP8 and its transpose.
      {Recipe::kFp8Current, false, true, 4 * n + 2 * n, 0.0},
      {Recipe::kFp8Current, false, false, 4 * n + n, 0.0},
      // fp8-delayed: the amax fused, read once.
      {Recipe::kFp8Delayed, false, true, 2 * n + 2 * n, 0.0},
      // fp8-block: 1x128 fp32 scales of the copy (r x 32) and of the transpose (c x 124).
      {Recipe::kFp8Block, false, true, 2 * n + 2 * n, 4.0 * r * 32 + 4.0 * c * 124},
      {Recipe::kMxfp8, false, true, 2 * n + 2 * n, 1.0 * r * 128 + 1.0 * c * 496},
      // nvfp4: two reads, E2M1 half a byte; no transposed copy even when asked.
      {Recipe::kNvfp4, false, true, 4 * n + n / 2, 1.0 * r * 256},
      {Recipe::kFp8Rowwise, false, false, 2 * n + n, 4.0 * r},
      {Recipe::kInt8Rowwise, false, false, 2 * n + n, 4.0 * r},
  };
  for (const Case& k : cases) {
    SCOPED_TRACE(std::string(ToString(k.recipe)) + (k.transposes ? " +T" : ""));
    const QuantizationBytes b = QuantizationFloorBytes(k.recipe, r, c, k.weight, k.transposes);
    EXPECT_EQ(b.data, k.data);
    EXPECT_EQ(b.scales, k.scales);
  }
  // Weights: fp8-block's 128x128 blocks (96 x 32 of them, the transpose's the same count);
  // w4a16's INT4 half a byte with BF16 scales per group of 64 along K.
  const double wsize = static_cast<double>(wn) * c;
  QuantizationBytes w = QuantizationFloorBytes(Recipe::kFp8Block, wn, c, true, true);
  EXPECT_EQ(w.data, 4 * wsize);
  EXPECT_EQ(w.scales, 2 * 4.0 * 96 * 32);
  w = QuantizationFloorBytes(Recipe::kW4a16, wn, c, true, false, 64);
  EXPECT_EQ(w.data, 2 * wsize + wsize / 2);
  EXPECT_EQ(w.scales, 2.0 * wn * 64);
  w = QuantizationFloorBytes(Recipe::kW8a16, wn, c, true, false);
  EXPECT_EQ(w.data, 3 * wsize);
  EXPECT_EQ(w.scales, 2.0 * wn);
}

TEST(QuantizationFloorBytesTest, Bf16AndEmptyTensorsMoveNothing) {
  for (bool transposes : {false, true}) {
    const QuantizationBytes b =
        QuantizationFloorBytes(Recipe::kBf16, 4096, 4096, false, transposes);
    EXPECT_EQ(b.data, 0.0);
    EXPECT_EQ(b.scales, 0.0);
  }
  EXPECT_EQ(QuantizationFloorBytes(Recipe::kFp8Current, 0, 4096, false, true).data, 0.0);
  EXPECT_EQ(QuantizationFloorBytes(Recipe::kFp8Block, 4096, 0, false, true).scales, 0.0);
  EXPECT_EQ(QuantizedElementBytes(Recipe::kBf16), 0.0);
  EXPECT_EQ(QuantizedElementBytes(Recipe::kNvfp4), 0.5);
  EXPECT_EQ(QuantizedElementBytes(Recipe::kW4a16), 0.5);
  EXPECT_EQ(QuantizedElementBytes(Recipe::kMxfp8), 1.0);
}

}  // namespace
}  // namespace gemmprof::core::quant
