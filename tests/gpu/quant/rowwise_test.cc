// RowwiseQuantize (fp8-rowwise, R11) against core::quant::QuantizeRowwise: every byte and
// every row's scale bits, for random normal tensors and tensors with edge values (zeros,
// NaN, Inf, values that saturate), E4M3 and E5M2, over the vectorized on-chip path (cols a
// multiple of 8 up to kRowwiseOnChipMaxCols) and the scalar path (odd cols, longer rows,
// misaligned pointers).
#include <cmath>
#include <string>
#include <utility>
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
  // Runs the kernel on `t` with x offset by `x_misalign` BF16 elements and out by
  // `out_misalign` bytes from their (256-byte aligned) allocations.
  void Check(const TestTensor& t, q::Fp8Format f, int x_misalign, int out_misalign) {
    const int64_t rows = t.rows, cols = t.cols, n = rows * cols;
    const q::RowScaled want = q::QuantizeRowwise(t.values, rows, cols, f);
    auto* base = Device<uint16_t>(n + x_misalign);
    auto* out = Device<uint8_t>(n + out_misalign);
    auto* sc = Device<float>(rows);
    ASSERT_TRUE(base && out && sc);
    CUDA_ASSERT(cudaMemcpy(base + x_misalign, t.bits.data(), n * 2, cudaMemcpyHostToDevice));
    const auto* x = reinterpret_cast<const __nv_bfloat16*>(base + x_misalign);
    for (uint8_t poison : kPoisons) {
      CUDA_ASSERT(cudaMemset(out, poison, n + out_misalign));
      CUDA_ASSERT(cudaMemset(sc, poison, rows * sizeof(float)));
      CUDA_ASSERT(RowwiseQuantize(x, rows, cols, f, out + out_misalign, sc, nullptr));
      CUDA_ASSERT(cudaDeviceSynchronize());
      std::vector<uint8_t> got(n);
      CUDA_ASSERT(cudaMemcpy(got.data(), out + out_misalign, n, cudaMemcpyDeviceToHost));
      CompareBytes(got, want.data, cols, "out");
      std::vector<float> scales(rows);
      CUDA_ASSERT(cudaMemcpy(scales.data(), sc, rows * sizeof(float), cudaMemcpyDeviceToHost));
      CompareFloatBits(scales, want.scale_inv, 1, "scale_inv");
    }
  }
  void Check(const TestTensor& t, q::Fp8Format f, int misalign) { Check(t, f, misalign, misalign); }
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

// Sets element (r, c) of t to `value` rounded to BF16, in both of its copies.
void Set(TestTensor& t, int64_t r, int64_t c, float value) {
  t.bits[r * t.cols + c] = q::FloatToBf16Bits(value);
  t.values[r * t.cols + c] = q::Bf16BitsToFloat(t.bits[r * t.cols + c]);
}
void FillRow(TestTensor& t, int64_t r, float value) {
  for (int64_t c = 0; c < t.cols; ++c) Set(t, r, c, value);
}

// One kind of special row per row, each row's special value at its first, a middle and
// its last column (the tail vector), on every launch path: cols 8 (32 threads a row), 13
// (scalar), 4096 (64 threads), 16384 (256 threads, the on-chip limit), 16385 (scalar,
// read twice); pointers aligned, x misaligned only (2 and 8 bytes), out misaligned only.
TEST_F(RowwiseQuantizeTest, SpecialRowsOnEveryPath) {
  for (int64_t cols : {8, 13, 4096, 16384, 16385}) {
    TestTensor t = MakeTensor(12, cols, 31, false);
    const int64_t spots[3] = {0, cols / 2, cols - 1};
    FillRow(t, 0, 0.0f);                                // zeros: scale 1
    Set(t, 0, cols / 2, -0.0f);                         //   with a negative zero
    for (int64_t c : spots) Set(t, 1, c, NAN);          // NaN ignored in the amax
    FillRow(t, 2, NAN);                                 // all NaN: amax 0, scale 1
    Set(t, 3, cols - 1, INFINITY);                      // +Inf: scale 1
    Set(t, 4, 0, -INFINITY);                            // -Inf: scale 1
    FillRow(t, 5, 0x1p-130f);                           // 448 / amax overflows: FLT_MAX
    Set(t, 5, cols - 1, -0x1p-133f);                    //   and a BF16 subnormal
    for (int64_t c : spots) Set(t, 6, c, 0x1.fep127f);  // huge finite amax
    for (int64_t c : spots) Set(t, 7, c, -1.2109375f);  // amax * scale = max + 1 ulp
    for (int64_t c = 0; c < cols; ++c) Set(t, 8, c, t.values[8 * cols + c] * 0x1p-100f);  // tiny
    Set(t, 9, cols - 1, 1e6f);  // one outlier: E4M3 codes of the rest subnormal or 0
    FillRow(t, 10, -0.0f);      // negative zeros only
    for (q::Fp8Format f : {q::Fp8Format::kE4M3, q::Fp8Format::kE5M2}) {
      for (auto [xm, om] : {std::pair{0, 0}, std::pair{1, 0}, std::pair{4, 0}, std::pair{0, 4}}) {
        SCOPED_TRACE(std::to_string(cols) + " cols" +
                     (f == q::Fp8Format::kE4M3 ? " e4m3" : " e5m2") + " x+" + std::to_string(xm) +
                     " out+" + std::to_string(om));
        ASSERT_NO_FATAL_FAILURE(Check(t, f, xm, om));
      }
    }
  }
}

// More rows than a grid dimension's 65535: the grid runs along x on both paths.
TEST_F(RowwiseQuantizeTest, ManyShortRows) {
  for (int64_t cols : {8, 13}) {
    const TestTensor t = MakeTensor(70001, cols, 5, true, 3.0f);
    SCOPED_TRACE(std::to_string(cols) + " cols");
    ASSERT_NO_FATAL_FAILURE(Check(t, q::Fp8Format::kE4M3, 0));
  }
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
  auto* x = Device<__nv_bfloat16>(64);
  ASSERT_TRUE(x);
  EXPECT_EQ(RowwiseQuantize(x, 8, -8, q::Fp8Format::kE4M3, out, sc, nullptr),
            cudaErrorInvalidValue);
  EXPECT_EQ(RowwiseQuantize(x, 8, 8, q::Fp8Format::kE4M3, nullptr, sc, nullptr),
            cudaErrorInvalidValue);
  EXPECT_EQ(RowwiseQuantize(x, 8, 8, q::Fp8Format::kE4M3, out, nullptr, nullptr),
            cudaErrorInvalidValue);
  EXPECT_EQ(RowwiseQuantize(x, int64_t{1} << 31, 1, q::Fp8Format::kE4M3, out, sc, nullptr),
            cudaErrorInvalidValue);
}

}  // namespace
}  // namespace gemmprof::kernels
