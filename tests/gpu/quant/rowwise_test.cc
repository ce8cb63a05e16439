// RowwiseQuantize (fp8-rowwise, R11) against core::quant::QuantizeRowwise: every byte and
// every row's scale bits, for random normal tensors and tensors with edge values (zeros,
// NaN, Inf, values that saturate), E4M3 and E5M2, over the vectorized on-chip path (cols a
// multiple of 8 up to kRowwiseOnChipMaxCols) and the scalar path (odd cols, longer rows,
// misaligned pointers).
#include <cmath>
#include <string>
#include <vector>

#include "core/quant/quant.h"
#include "kernels/quant/quantize.h"
#include "tests/gpu/quant/gpu_test_support.h"

namespace gemmprof::kernels {
namespace {

namespace q = core::quant;
using testing::CompareBytes;
using testing::CompareFloatBits;
using testing::kPoisons;
using testing::MakeTensor;
using testing::TestTensor;

class RowwiseQuantizeTest : public testing::GpuTest {
 protected:
  void Check(const TestTensor& t, q::Fp8Format f, int misalign) {
    const int64_t rows = t.rows, cols = t.cols, n = rows * cols;
    const q::RowScaled want = q::QuantizeRowwise(t.values, rows, cols, f);
    auto* base = Device<uint16_t>(n + misalign);
    auto* out = Device<uint8_t>(n + misalign);
    auto* sc = Device<float>(rows);
    ASSERT_TRUE(base && out && sc);
    CUDA_ASSERT(cudaMemcpy(base + misalign, t.bits.data(), n * 2, cudaMemcpyHostToDevice));
    const auto* x = reinterpret_cast<const __nv_bfloat16*>(base + misalign);
    for (uint8_t poison : kPoisons) {
      CUDA_ASSERT(cudaMemset(out, poison, n + misalign));
      CUDA_ASSERT(cudaMemset(sc, poison, rows * sizeof(float)));
      CUDA_ASSERT(RowwiseQuantize(x, rows, cols, f, out + misalign, sc, nullptr));
      CUDA_ASSERT(cudaDeviceSynchronize());
      std::vector<uint8_t> got(n);
      CUDA_ASSERT(cudaMemcpy(got.data(), out + misalign, n, cudaMemcpyDeviceToHost));
      CompareBytes(got, want.data, cols, "out");
      std::vector<float> scales(rows);
      CUDA_ASSERT(cudaMemcpy(scales.data(), sc, rows * sizeof(float), cudaMemcpyDeviceToHost));
      CompareFloatBits(scales, want.scale_inv, 1, "scale_inv");
    }
  }
};

TEST_F(RowwiseQuantizeTest, MatchesHostOnBothPathsAndEdgeValues) {
  struct Shape {
    int64_t rows, cols;
  };
  const std::vector<Shape> shapes = {{1, 1},       {7, 13},     {1, 16384}, {3, 16385},
                                     {1024, 4096}, {33, 14336}, {5, 8},     {17, 24}};
  for (const Shape& s : shapes) {
    for (bool edges : {false, true}) {
      const TestTensor t = MakeTensor(s.rows, s.cols, 707, edges, edges ? 1.0f : 40.0f);
      for (q::Fp8Format f : {q::Fp8Format::kE4M3, q::Fp8Format::kE5M2}) {
        for (int misalign : {0, 1}) {
          SCOPED_TRACE(std::to_string(s.rows) + "x" + std::to_string(s.cols) +
                       (edges ? " edges" : " normal") +
                       (f == q::Fp8Format::kE4M3 ? " e4m3" : " e5m2") + " misalign " +
                       std::to_string(misalign));
          ASSERT_NO_FATAL_FAILURE(Check(t, f, misalign));
        }
      }
    }
  }
}

// A row of zeros has scale 1 and zero bytes; a row holding an Inf has scale 1 (R5).
TEST_F(RowwiseQuantizeTest, ZeroAndInfiniteRowsHaveScaleOne) {
  TestTensor t = MakeTensor(3, 64, 9, false);
  for (int64_t c = 0; c < 64; ++c) {
    t.values[c] = 0.0f;
    t.bits[c] = 0;
  }
  t.values[64 + 5] = INFINITY;
  t.bits[64 + 5] = q::FloatToBf16Bits(INFINITY);
  const q::RowScaled want = q::QuantizeRowwise(t.values, 3, 64, q::Fp8Format::kE4M3);
  ASSERT_EQ(want.scale_inv[0], 1.0f);
  ASSERT_EQ(want.scale_inv[1], 1.0f);
  ASSERT_NO_FATAL_FAILURE(Check(t, q::Fp8Format::kE4M3, 0));
}

TEST_F(RowwiseQuantizeTest, BadArgumentsAreInvalidValue) {
  auto* out = Device<uint8_t>(64);
  auto* sc = Device<float>(8);
  ASSERT_TRUE(out && sc);
  EXPECT_EQ(RowwiseQuantize(nullptr, 8, 8, q::Fp8Format::kE4M3, out, sc, nullptr),
            cudaErrorInvalidValue);
  EXPECT_EQ(RowwiseQuantize(nullptr, -1, 8, q::Fp8Format::kE4M3, out, sc, nullptr),
            cudaErrorInvalidValue);
  EXPECT_EQ(RowwiseQuantize(nullptr, 0, 8, q::Fp8Format::kE4M3, nullptr, nullptr, nullptr),
            cudaSuccess);
}

}  // namespace
}  // namespace gemmprof::kernels
