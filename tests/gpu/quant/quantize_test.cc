// CastTranspose, BlockQuantize, Mxfp8Quantize and Nvfp4Quantize against the host
// quantizers of core/quant/quant.h: every output byte and every scale bit, for
// random normal tensors and tensors with edge values, over aligned (vectorized) and odd
// (scalar edge path) shapes. Transposed outputs are compared with the host quantization
// of Transpose(x).
#include "kernels/quant/quantize.h"

#include <cmath>
#include <string>
#include <vector>

#include "core/quant/quant.h"
#include "tests/gpu/quant/gpu_test_support.h"

namespace gemmprof::kernels {
namespace {

namespace q = core::quant;
using testing::CompareBytes;
using testing::CompareFloatBits;
using testing::FloatBits;
using testing::kPoisons;
using testing::MakeTensor;
using testing::TestTensor;

struct Shape {
  int64_t rows, cols;
};

// Odd shapes take the scalar edge path everywhere or on their border tiles; the
// multiples of 128 take the 16-byte path.
const std::vector<Shape>& Shapes() {
  static const std::vector<Shape> shapes = {{1, 1},      {7, 33},    {131, 257}, {256, 4096},
                                            {1000, 130}, {128, 128}, {384, 512}, {272, 1040},
                                            {33, 4096},  {160, 48}};
  return shapes;
}

std::string Name(const TestTensor& t, bool edges) {
  return std::to_string(t.rows) + "x" + std::to_string(t.cols) + (edges ? " edges" : " normal");
}

class QuantizeTest : public testing::GpuTest {
 protected:
  // The tensor on the device, `offset` elements past a 16-byte aligned allocation.
  const __nv_bfloat16* Upload(const TestTensor& t, int offset) {
    auto* base = Device<uint16_t>(t.bits.size() + offset);
    if (base == nullptr) return nullptr;
    const cudaError_t err =
        cudaMemcpy(base + offset, t.bits.data(), t.bits.size() * 2, cudaMemcpyHostToDevice);
    EXPECT_EQ(err, cudaSuccess) << "upload: " << cudaGetErrorName(err);
    return reinterpret_cast<const __nv_bfloat16*>(base + offset);
  }

  template <typename T>
  static void Fetch(const T* d, size_t n, std::vector<T>* out) {
    out->assign(n, T{});
    CUDA_ASSERT(cudaMemcpy(out->data(), d, n * sizeof(T), cudaMemcpyDeviceToHost));
  }

  void CheckCastTranspose(const TestTensor& t, q::Fp8Format f, float scale, bool transpose,
                          int misalign);
  void CheckBlock(const TestTensor& t, int32_t block_rows, bool pow2, bool transpose, int misalign);
  void CheckMxfp8(const TestTensor& t, bool transpose, int misalign);
  void CheckNvfp4(const TestTensor& t, int misalign);
  void CheckCurrentScaling(const TestTensor& t, q::Fp8Format f, bool transpose, bool graph);
  bool dispatch_ = false;  // CheckCurrentScaling calls CurrentScaling, not the fused launch
};

void QuantizeTest::CheckCastTranspose(const TestTensor& t, q::Fp8Format f, float scale,
                                      bool transpose, int misalign) {
  const int64_t rows = t.rows, cols = t.cols, n = rows * cols;
  const auto want = q::QuantizeWithScale(t.values, rows, cols, scale, f);
  const auto want_t =
      q::QuantizeWithScale(q::Transpose(t.values, rows, cols), cols, rows, scale, f);
  const auto* x = Upload(t, misalign);
  auto* out = Device<uint8_t>(n + misalign);
  auto* out_t = Device<uint8_t>(n + misalign);
  auto* d_scale = Device<float>(1);
  auto* amax = Device<float>(1);
  ASSERT_TRUE(x && out && out_t && d_scale && amax);
  CUDA_ASSERT(cudaMemcpy(d_scale, &scale, 4, cudaMemcpyHostToDevice));
  for (uint8_t poison : kPoisons) {
    CUDA_ASSERT(cudaMemset(out, poison, n + misalign));
    CUDA_ASSERT(cudaMemset(out_t, poison, n + misalign));
    CUDA_ASSERT(cudaMemset(amax, poison, 4));
    CUDA_ASSERT(CastTranspose(x, rows, cols, d_scale, f, out + misalign,
                              transpose ? out_t + misalign : nullptr, transpose ? amax : nullptr,
                              nullptr));
    CUDA_ASSERT(cudaDeviceSynchronize());
    std::vector<uint8_t> got;
    ASSERT_NO_FATAL_FAILURE(Fetch(out + misalign, n, &got));
    CompareBytes(got, want.data, cols, "out");
    if (!transpose) continue;
    ASSERT_NO_FATAL_FAILURE(Fetch(out_t + misalign, n, &got));
    CompareBytes(got, want_t.data, rows, "out_t");
    std::vector<float> got_amax;
    ASSERT_NO_FATAL_FAILURE(Fetch(amax, 1, &got_amax));
    CompareFloatBits(got_amax, {want.amax}, 1, "amax");
  }
}

TEST_F(QuantizeTest, CastTransposeMatchesHost) {
  for (const Shape& s : Shapes()) {
    for (bool edges : {false, true}) {
      const TestTensor t = MakeTensor(s.rows, s.cols, 101, edges);
      for (auto f : {q::Fp8Format::kE4M3, q::Fp8Format::kE5M2}) {
        // Current scaling, a scale that pushes most values past the format's max, and one
        // that pushes them into its subnormals.
        const float scales[] = {q::ScaleFromAmax(q::Amax(t.values), f),
                                f == q::Fp8Format::kE4M3 ? 1000.0f : 2e5f, std::ldexp(1.0f, -12)};
        for (float scale : scales) {
          SCOPED_TRACE(Name(t, edges) + " fmt=" + std::to_string(static_cast<int>(f)) +
                       " scale=" + std::to_string(scale));
          ASSERT_NO_FATAL_FAILURE(CheckCastTranspose(t, f, scale, true, 0));
        }
        SCOPED_TRACE(Name(t, edges) + " without transpose");
        ASSERT_NO_FATAL_FAILURE(CheckCastTranspose(t, f, scales[0], false, 0));
      }
    }
  }
}

void QuantizeTest::CheckBlock(const TestTensor& t, int32_t block_rows, bool pow2, bool transpose,
                              int misalign) {
  const int64_t rows = t.rows, cols = t.cols, n = rows * cols;
  const auto want = q::QuantizeBlock(t.values, rows, cols, block_rows, pow2);
  const auto want_t =
      q::QuantizeBlock(q::Transpose(t.values, rows, cols), cols, rows, block_rows, pow2);
  const auto* x = Upload(t, misalign);
  auto* out = Device<uint8_t>(n + misalign);
  auto* out_t = Device<uint8_t>(n + misalign);
  auto* sinv = Device<float>(want.scale_inv.size());
  auto* sinv_t = Device<float>(want_t.scale_inv.size());
  ASSERT_TRUE(x && out && out_t && sinv && sinv_t);
  for (uint8_t poison : kPoisons) {
    CUDA_ASSERT(cudaMemset(out, poison, n + misalign));
    CUDA_ASSERT(cudaMemset(out_t, poison, n + misalign));
    CUDA_ASSERT(cudaMemset(sinv, poison, want.scale_inv.size() * 4));
    CUDA_ASSERT(cudaMemset(sinv_t, poison, want_t.scale_inv.size() * 4));
    CUDA_ASSERT(BlockQuantize(x, rows, cols, block_rows, pow2, out + misalign, sinv,
                              transpose ? out_t + misalign : nullptr, transpose ? sinv_t : nullptr,
                              nullptr));
    CUDA_ASSERT(cudaDeviceSynchronize());
    std::vector<uint8_t> got;
    std::vector<float> got_s;
    ASSERT_NO_FATAL_FAILURE(Fetch(out + misalign, n, &got));
    CompareBytes(got, want.data, cols, "out");
    ASSERT_NO_FATAL_FAILURE(Fetch(sinv, want.scale_inv.size(), &got_s));
    CompareFloatBits(got_s, want.scale_inv, (cols + 127) / 128, "scale_inv");
    if (!transpose) continue;
    ASSERT_NO_FATAL_FAILURE(Fetch(out_t + misalign, n, &got));
    CompareBytes(got, want_t.data, rows, "out_t");
    ASSERT_NO_FATAL_FAILURE(Fetch(sinv_t, want_t.scale_inv.size(), &got_s));
    CompareFloatBits(got_s, want_t.scale_inv, (rows + 127) / 128, "scale_inv_t");
  }
}

TEST_F(QuantizeTest, BlockQuantizeMatchesHost) {
  for (const Shape& s : Shapes()) {
    for (bool edges : {false, true}) {
      const TestTensor t = MakeTensor(s.rows, s.cols, 202, edges);
      for (int32_t block_rows : {1, 128}) {
        for (bool pow2 : {true, false}) {
          for (bool transpose : {true, false}) {
            SCOPED_TRACE(Name(t, edges) + " block_rows=" + std::to_string(block_rows) +
                         " pow2=" + std::to_string(pow2) + " t=" + std::to_string(transpose));
            ASSERT_NO_FATAL_FAILURE(CheckBlock(t, block_rows, pow2, transpose, 0));
          }
        }
      }
    }
  }
}

// cuBLASLt's layouts from the host's row-major grid, written out independently of the
// kernel: VEC128 (1x128) puts each K block's rows contiguous at a stride of the rows
// rounded up to 4; BLK128 (128x128) each row of tiles' K blocks at a stride of the K
// blocks rounded up to 4; padding 1.0.
std::vector<float> HostGemmLayout(const std::vector<float>& grid, int64_t rows, int64_t cols,
                                  int32_t block_rows) {
  const int64_t kb = (cols + 127) / 128;
  std::vector<float> out;
  if (block_rows == 1) {
    const int64_t stride = (rows + 3) / 4 * 4;
    out.assign(kb * stride, 1.0f);
    for (int64_t b = 0; b < kb; ++b)
      for (int64_t r = 0; r < rows; ++r) out[b * stride + r] = grid[r * kb + b];
  } else {
    const int64_t rb = (rows + 127) / 128, stride = (kb + 3) / 4 * 4;
    out.assign(rb * stride, 1.0f);
    for (int64_t r = 0; r < rb; ++r)
      for (int64_t b = 0; b < kb; ++b) out[r * stride + b] = grid[r * kb + b];
  }
  return out;
}

// The scales written straight into cuBLASLt's layouts (with and without the row-major
// grids beside them) equal the host's grid laid out there, padding included; the data
// bytes are the same as ever.
TEST_F(QuantizeTest, BlockQuantizeWritesCublasLtLayouts) {
  for (const Shape& s : Shapes()) {
    const TestTensor t = MakeTensor(s.rows, s.cols, 203, /*edges=*/true);
    const int64_t rows = t.rows, cols = t.cols, n = rows * cols;
    for (int32_t block_rows : {1, 128}) {
      const auto want = q::QuantizeBlock(t.values, rows, cols, block_rows, true);
      const auto want_t =
          q::QuantizeBlock(q::Transpose(t.values, rows, cols), cols, rows, block_rows, true);
      const std::vector<float> layout = HostGemmLayout(want.scale_inv, rows, cols, block_rows);
      const std::vector<float> layout_t = HostGemmLayout(want_t.scale_inv, cols, rows, block_rows);
      const auto* x = Upload(t, 0);
      auto* out = Device<uint8_t>(n);
      auto* out_t = Device<uint8_t>(n);
      auto* g = Device<float>(layout.size());
      auto* g_t = Device<float>(layout_t.size());
      auto* grid = Device<float>(want.scale_inv.size());
      ASSERT_TRUE(x && out && out_t && g && g_t && grid);
      for (bool with_grid : {false, true}) {
        SCOPED_TRACE(Name(t, true) + " block_rows=" + std::to_string(block_rows) +
                     " with_grid=" + std::to_string(with_grid));
        for (uint8_t poison : kPoisons) {
          CUDA_ASSERT(cudaMemset(out, poison, n));
          CUDA_ASSERT(cudaMemset(out_t, poison, n));
          CUDA_ASSERT(cudaMemset(g, poison, layout.size() * 4));
          CUDA_ASSERT(cudaMemset(g_t, poison, layout_t.size() * 4));
          CUDA_ASSERT(cudaMemset(grid, poison, want.scale_inv.size() * 4));
          BlockScaleOutputs so;
          so.scale_inv = with_grid ? grid : nullptr;
          so.gemm = g;
          so.gemm_stride = block_rows == 1 ? (rows + 3) / 4 * 4 : ((cols + 127) / 128 + 3) / 4 * 4;
          so.gemm_t = g_t;
          so.gemm_stride_t =
              block_rows == 1 ? (cols + 3) / 4 * 4 : ((rows + 127) / 128 + 3) / 4 * 4;
          CUDA_ASSERT(BlockQuantize(x, rows, cols, block_rows, true, out, out_t, so, nullptr));
          CUDA_ASSERT(cudaDeviceSynchronize());
          std::vector<uint8_t> got;
          std::vector<float> got_s;
          ASSERT_NO_FATAL_FAILURE(Fetch(out, n, &got));
          CompareBytes(got, want.data, cols, "out");
          ASSERT_NO_FATAL_FAILURE(Fetch(out_t, n, &got));
          CompareBytes(got, want_t.data, rows, "out_t");
          ASSERT_NO_FATAL_FAILURE(Fetch(g, layout.size(), &got_s));
          CompareFloatBits(got_s, layout, static_cast<int64_t>(layout.size()), "gemm layout");
          ASSERT_NO_FATAL_FAILURE(Fetch(g_t, layout_t.size(), &got_s));
          CompareFloatBits(got_s, layout_t, static_cast<int64_t>(layout_t.size()),
                           "gemm layout of x^T");
          if (!with_grid) continue;
          ASSERT_NO_FATAL_FAILURE(Fetch(grid, want.scale_inv.size(), &got_s));
          CompareFloatBits(got_s, want.scale_inv, (cols + 127) / 128, "scale_inv");
        }
      }
    }
  }
}

TEST_F(QuantizeTest, BlockQuantizeRefusesMissingOrShortScaleOutputs) {
  auto* x = Device<uint16_t>(256 * 256);
  auto* out = Device<uint8_t>(256 * 256);
  auto* f = Device<float>(4096);
  ASSERT_TRUE(x && out && f);
  const auto* bx = reinterpret_cast<const __nv_bfloat16*>(x);
  BlockScaleOutputs none;
  EXPECT_EQ(BlockQuantize(bx, 256, 256, 1, true, out, nullptr, none, nullptr),
            cudaErrorInvalidValue);
  BlockScaleOutputs short_stride;
  short_stride.gemm = f;
  short_stride.gemm_stride = 255;  // fewer than the 256 rows
  EXPECT_EQ(BlockQuantize(bx, 256, 256, 1, true, out, nullptr, short_stride, nullptr),
            cudaErrorInvalidValue);
  BlockScaleOutputs no_t;
  no_t.gemm = f;
  no_t.gemm_stride = 256;
  // 1x128 with a transposed copy but no transposed scales.
  EXPECT_EQ(BlockQuantize(bx, 256, 256, 1, true, out, out, no_t, nullptr), cudaErrorInvalidValue);
  cudaGetLastError();
}

void QuantizeTest::CheckMxfp8(const TestTensor& t, bool transpose, int misalign) {
  const int64_t rows = t.rows, cols = t.cols, n = rows * cols;
  const auto want = q::QuantizeMxfp8(t.values, rows, cols);
  const auto want_t = q::QuantizeMxfp8(q::Transpose(t.values, rows, cols), cols, rows);
  const auto* x = Upload(t, misalign);
  auto* out = Device<uint8_t>(n + misalign);
  auto* out_t = Device<uint8_t>(n + misalign);
  auto* sc = Device<uint8_t>(want.scales.size());
  auto* sc_t = Device<uint8_t>(want_t.scales.size());
  ASSERT_TRUE(x && out && out_t && sc && sc_t);
  for (uint8_t poison : kPoisons) {
    CUDA_ASSERT(cudaMemset(out, poison, n + misalign));
    CUDA_ASSERT(cudaMemset(out_t, poison, n + misalign));
    CUDA_ASSERT(cudaMemset(sc, poison, want.scales.size()));
    CUDA_ASSERT(cudaMemset(sc_t, poison, want_t.scales.size()));
    CUDA_ASSERT(Mxfp8Quantize(x, rows, cols, out + misalign, sc,
                              transpose ? out_t + misalign : nullptr, transpose ? sc_t : nullptr,
                              nullptr));
    CUDA_ASSERT(cudaDeviceSynchronize());
    std::vector<uint8_t> got;
    ASSERT_NO_FATAL_FAILURE(Fetch(out + misalign, n, &got));
    CompareBytes(got, want.data, cols, "out");
    ASSERT_NO_FATAL_FAILURE(Fetch(sc, want.scales.size(), &got));
    CompareBytes(got, want.scales, (cols + 31) / 32, "scales");
    if (!transpose) continue;
    ASSERT_NO_FATAL_FAILURE(Fetch(out_t + misalign, n, &got));
    CompareBytes(got, want_t.data, rows, "out_t");
    ASSERT_NO_FATAL_FAILURE(Fetch(sc_t, want_t.scales.size(), &got));
    CompareBytes(got, want_t.scales, (rows + 31) / 32, "scales_t");
  }
}

// cuBLASLt's 128x4 tiled swizzle of a row-major [rows, sc] byte grid, written out
// independently of the kernels: 128-row x 4-column tiles, row-block major; inside a tile
// row r and column c at (r % 32) * 16 + (r / 32) * 4 + c; zero padding.
std::vector<uint8_t> HostSwizzle(const std::vector<uint8_t>& grid, int64_t rows, int64_t sc) {
  const int64_t pr = (rows + 127) / 128 * 128, pc = (sc + 3) / 4 * 4;
  std::vector<uint8_t> out(pr * pc, 0);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < sc; ++c) {
      const int64_t tile = (r / 128) * (pc / 4) + c / 4, rr = r % 128;
      out[tile * 512 + (rr % 32) * 16 + (rr / 32) * 4 + c % 4] = grid[r * sc + c];
    }
  return out;
}

// The swizzled scales written by the quantization itself equal the host's grid swizzled,
// for x and x^T, with and without the row-major grids beside them.
TEST_F(QuantizeTest, Mxfp8WritesCublasLtSwizzle) {
  for (const Shape& s : Shapes()) {
    const TestTensor t = MakeTensor(s.rows, s.cols, 209, /*edges=*/true);
    const int64_t rows = t.rows, cols = t.cols, n = rows * cols;
    const auto want = q::QuantizeMxfp8(t.values, rows, cols);
    const auto want_t = q::QuantizeMxfp8(q::Transpose(t.values, rows, cols), cols, rows);
    const std::vector<uint8_t> sw = HostSwizzle(want.scales, rows, (cols + 31) / 32);
    const std::vector<uint8_t> sw_t = HostSwizzle(want_t.scales, cols, (rows + 31) / 32);
    const auto* x = Upload(t, 0);
    auto* out = Device<uint8_t>(n);
    auto* out_t = Device<uint8_t>(n);
    auto* d_sw = Device<uint8_t>(sw.size());
    auto* d_sw_t = Device<uint8_t>(sw_t.size());
    auto* grid = Device<uint8_t>(want.scales.size());
    ASSERT_TRUE(x && out && out_t && d_sw && d_sw_t && grid);
    for (bool with_grid : {false, true}) {
      SCOPED_TRACE(Name(t, true) + " with_grid=" + std::to_string(with_grid));
      for (uint8_t poison : kPoisons) {
        CUDA_ASSERT(cudaMemset(out, poison, n));
        CUDA_ASSERT(cudaMemset(out_t, poison, n));
        CUDA_ASSERT(cudaMemset(d_sw, poison, sw.size()));
        CUDA_ASSERT(cudaMemset(d_sw_t, poison, sw_t.size()));
        CUDA_ASSERT(cudaMemset(grid, poison, want.scales.size()));
        MxScaleOutputs so;
        so.scales = with_grid ? grid : nullptr;
        so.swizzled = d_sw;
        so.swizzled_t = d_sw_t;
        CUDA_ASSERT(Mxfp8Quantize(x, rows, cols, out, out_t, so, nullptr));
        CUDA_ASSERT(cudaDeviceSynchronize());
        std::vector<uint8_t> got;
        ASSERT_NO_FATAL_FAILURE(Fetch(out, n, &got));
        CompareBytes(got, want.data, cols, "out");
        ASSERT_NO_FATAL_FAILURE(Fetch(out_t, n, &got));
        CompareBytes(got, want_t.data, rows, "out_t");
        ASSERT_NO_FATAL_FAILURE(Fetch(d_sw, sw.size(), &got));
        CompareBytes(got, sw, 512, "swizzled scales");
        ASSERT_NO_FATAL_FAILURE(Fetch(d_sw_t, sw_t.size(), &got));
        CompareBytes(got, sw_t, 512, "swizzled scales of x^T");
        if (!with_grid) continue;
        ASSERT_NO_FATAL_FAILURE(Fetch(grid, want.scales.size(), &got));
        CompareBytes(got, want.scales, (cols + 31) / 32, "scales");
      }
    }
  }
}

TEST_F(QuantizeTest, Mxfp8MatchesHost) {
  for (const Shape& s : Shapes()) {
    for (bool edges : {false, true}) {
      // A wide spread of magnitudes so neighbouring 32-blocks get different exponents.
      const TestTensor t = MakeTensor(s.rows, s.cols, 303, edges, edges ? 1.0f : 300.0f);
      for (bool transpose : {true, false}) {
        SCOPED_TRACE(Name(t, edges) + " t=" + std::to_string(transpose));
        ASSERT_NO_FATAL_FAILURE(CheckMxfp8(t, transpose, 0));
      }
    }
  }
}

void QuantizeTest::CheckNvfp4(const TestTensor& t, int misalign) {
  const int64_t rows = t.rows, cols = t.cols;
  const auto want = q::QuantizeNvfp4(t.values, rows, cols);
  const auto* x = Upload(t, misalign);
  auto* out = Device<uint8_t>(want.data.size() + misalign);
  auto* sc = Device<uint8_t>(want.scales.size());
  auto* amax = Device<float>(1);
  auto* ts = Device<float>(1);
  ASSERT_TRUE(x && out && sc && amax && ts);
  for (uint8_t poison : kPoisons) {
    CUDA_ASSERT(cudaMemset(out, poison, want.data.size() + misalign));
    CUDA_ASSERT(cudaMemset(sc, poison, want.scales.size()));
    CUDA_ASSERT(cudaMemset(ts, poison, 4));
    CUDA_ASSERT(Amax(x, rows * cols, amax, nullptr));
    CUDA_ASSERT(Nvfp4Quantize(x, rows, cols, amax, out + misalign, sc, ts, nullptr));
    CUDA_ASSERT(cudaDeviceSynchronize());
    std::vector<uint8_t> got;
    ASSERT_NO_FATAL_FAILURE(Fetch(out + misalign, want.data.size(), &got));
    CompareBytes(got, want.data, (cols + 1) / 2, "data");
    ASSERT_NO_FATAL_FAILURE(Fetch(sc, want.scales.size(), &got));
    CompareBytes(got, want.scales, (cols + 15) / 16, "scales");
    std::vector<float> got_ts;
    ASSERT_NO_FATAL_FAILURE(Fetch(ts, 1, &got_ts));
    CompareFloatBits(got_ts, {want.tensor_scale}, 1, "tensor_scale");
  }
}

// The swizzled scales NVFP4 writes itself (padding included) equal the host's grid
// swizzled, with and without the row-major grid beside them, on the vector path, the
// scalar path (odd widths) and a tensor large enough that each thread walks several
// iterations of the grid.
TEST_F(QuantizeTest, Nvfp4WritesCublasLtSwizzle) {
  std::vector<Shape> shapes = Shapes();
  shapes.push_back({2304, 4096});
  for (const Shape& s : shapes) {
    const TestTensor t = MakeTensor(s.rows, s.cols, 505, /*edges=*/true);
    const int64_t rows = t.rows, cols = t.cols;
    const auto want = q::QuantizeNvfp4(t.values, rows, cols);
    const std::vector<uint8_t> sw = HostSwizzle(want.scales, rows, (cols + 15) / 16);
    const auto* x = Upload(t, 0);
    auto* out = Device<uint8_t>(want.data.size());
    auto* d_sw = Device<uint8_t>(sw.size());
    auto* grid = Device<uint8_t>(want.scales.size());
    auto* amax = Device<float>(1);
    auto* ts = Device<float>(1);
    ASSERT_TRUE(x && out && d_sw && grid && amax && ts);
    for (bool with_grid : {false, true}) {
      SCOPED_TRACE(Name(t, true) + " with_grid=" + std::to_string(with_grid));
      for (uint8_t poison : kPoisons) {
        CUDA_ASSERT(cudaMemset(out, poison, want.data.size()));
        CUDA_ASSERT(cudaMemset(d_sw, poison, sw.size()));
        CUDA_ASSERT(cudaMemset(grid, poison, want.scales.size()));
        CUDA_ASSERT(Amax(x, rows * cols, amax, nullptr));
        Nvfp4ScaleOutputs so;
        so.scales = with_grid ? grid : nullptr;
        so.swizzled = d_sw;
        so.tensor_scale = ts;
        CUDA_ASSERT(Nvfp4Quantize(x, rows, cols, amax, out, so, nullptr));
        CUDA_ASSERT(cudaDeviceSynchronize());
        std::vector<uint8_t> got;
        ASSERT_NO_FATAL_FAILURE(Fetch(out, want.data.size(), &got));
        CompareBytes(got, want.data, (cols + 1) / 2, "data");
        ASSERT_NO_FATAL_FAILURE(Fetch(d_sw, sw.size(), &got));
        CompareBytes(got, sw, 512, "swizzled scales");
        if (!with_grid) continue;
        ASSERT_NO_FATAL_FAILURE(Fetch(grid, want.scales.size(), &got));
        CompareBytes(got, want.scales, (cols + 15) / 16, "scales");
      }
    }
  }
}

// Refusals: no scale output at all, a misaligned swizzle buffer.
TEST_F(QuantizeTest, Nvfp4RefusesMissingOrMisalignedScaleOutputs) {
  const TestTensor t = MakeTensor(128, 64, 506, /*edges=*/false);
  const auto* x = Upload(t, 0);
  auto* out = Device<uint8_t>(128 * 32);
  auto* sw = Device<uint8_t>(4096 + 4);
  auto* scalars = Device<float>(2);
  ASSERT_TRUE(x && out && sw && scalars);
  Nvfp4ScaleOutputs none;
  none.tensor_scale = scalars + 1;
  EXPECT_EQ(Nvfp4Quantize(x, 128, 64, scalars, out, none, nullptr), cudaErrorInvalidValue);
  Nvfp4ScaleOutputs odd = none;
  odd.swizzled = sw + 1;
  EXPECT_EQ(Nvfp4Quantize(x, 128, 64, scalars, out, odd, nullptr), cudaErrorInvalidValue);
  Nvfp4ScaleOutputs no_scale;
  no_scale.swizzled = sw;
  EXPECT_EQ(Nvfp4Quantize(x, 128, 64, scalars, out, no_scale, nullptr), cudaErrorInvalidValue);
}

TEST_F(QuantizeTest, Nvfp4MatchesHost) {
  for (const Shape& s : Shapes()) {
    for (bool edges : {false, true}) {
      for (float stddev : {1.0f, 1e-3f, 3e4f}) {
        const TestTensor t = MakeTensor(s.rows, s.cols, 404, edges, stddev);
        SCOPED_TRACE(Name(t, edges) + " stddev=" + std::to_string(stddev));
        ASSERT_NO_FATAL_FAILURE(CheckNvfp4(t, 0));
      }
    }
  }
}

// The fused current-scaling launch against the host's amax, scale and cast. The large
// shapes give each block three or more tiles, so the register tile, the shared-memory
// tile and the reloaded tiles of its second pass are all exercised; `graph` replays the
// launch from a captured CUDA graph, which is how the runner times it.
void QuantizeTest::CheckCurrentScaling(const TestTensor& t, q::Fp8Format f, bool transpose,
                                       bool graph) {
  const int64_t rows = t.rows, cols = t.cols, n = rows * cols;
  const float amax = q::Amax(t.values);
  const float scale = q::ScaleFromAmax(amax, f);
  const auto want = q::QuantizeWithScale(t.values, rows, cols, scale, f);
  const auto want_t =
      q::QuantizeWithScale(q::Transpose(t.values, rows, cols), cols, rows, scale, f);
  const auto* x = Upload(t, 0);
  auto* out = Device<uint8_t>(n);
  auto* out_t = Device<uint8_t>(n);
  auto* scalars = Device<float>(3);
  auto* workspace = Device<float>(kCurrentScalingWorkspaceFloats);
  ASSERT_TRUE(x && out && out_t && scalars && workspace);
  cudaStream_t stream = nullptr;
  CUDA_ASSERT(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  cudaGraphExec_t exec = nullptr;
  const auto launch = [&] {
    return (dispatch_ ? CurrentScaling : CurrentScalingQuantize)(
        x, rows, cols, f, out, transpose ? out_t : nullptr, scalars, scalars + 1, scalars + 2,
        workspace, stream);
  };
  if (graph) {
    cudaGraph_t g = nullptr;
    CUDA_ASSERT(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
    const cudaError_t captured = launch();
    CUDA_ASSERT(cudaStreamEndCapture(stream, &g));
    CUDA_ASSERT(captured);
    CUDA_ASSERT(cudaGraphInstantiate(&exec, g, 0));
    CUDA_ASSERT(cudaGraphDestroy(g));
  }
  for (uint8_t poison : kPoisons) {
    CUDA_ASSERT(cudaMemset(out, poison, n));
    CUDA_ASSERT(cudaMemset(out_t, poison, n));
    CUDA_ASSERT(cudaMemset(scalars, poison, 3 * sizeof(float)));
    CUDA_ASSERT(cudaMemset(workspace, poison, kCurrentScalingWorkspaceFloats * sizeof(float)));
    // cudaMemset is asynchronous on the legacy stream, which a non-blocking stream does not
    // wait for: without this the poison could land after the launch (seen once on an H100).
    CUDA_ASSERT(cudaDeviceSynchronize());
    CUDA_ASSERT(graph ? cudaGraphLaunch(exec, stream) : launch());
    CUDA_ASSERT(cudaStreamSynchronize(stream));
    std::vector<uint8_t> got;
    ASSERT_NO_FATAL_FAILURE(Fetch(out, n, &got));
    CompareBytes(got, want.data, cols, "out");
    if (transpose) {
      ASSERT_NO_FATAL_FAILURE(Fetch(out_t, n, &got));
      CompareBytes(got, want_t.data, rows, "out_t");
    }
    std::vector<float> got_s;
    ASSERT_NO_FATAL_FAILURE(Fetch(scalars, 3, &got_s));
    CompareFloatBits(got_s, {amax, scale, 1.0f / scale}, 3, "amax, scale, scale_inv");
  }
  if (exec != nullptr) CUDA_ASSERT(cudaGraphExecDestroy(exec));
  CUDA_ASSERT(cudaStreamDestroy(stream));
}

TEST_F(QuantizeTest, CurrentScalingQuantizeMatchesHost) {
  std::vector<Shape> shapes = Shapes();
  shapes.push_back({6000, 4100});  // ragged edges, ~3 tiles per block on 132 SMs
  shapes.push_back({8192, 4096});  // all full tiles, 4 per block
  for (const Shape& s : shapes) {
    for (bool edges : {false, true}) {
      const TestTensor t = MakeTensor(s.rows, s.cols, 303, edges);
      for (auto f : {q::Fp8Format::kE4M3, q::Fp8Format::kE5M2}) {
        for (bool transpose : {true, false}) {
          SCOPED_TRACE(Name(t, edges) + " fmt=" + std::to_string(static_cast<int>(f)) +
                       (transpose ? " +T" : ""));
          ASSERT_NO_FATAL_FAILURE(CheckCurrentScaling(t, f, transpose, false));
        }
      }
    }
  }
  const TestTensor t = MakeTensor(6000, 4100, 304, true);
  SCOPED_TRACE("graph replay");
  ASSERT_NO_FATAL_FAILURE(CheckCurrentScaling(t, q::Fp8Format::kE4M3, true, true));
}

// The size rule's two sides: a transposing 6000 x 6000 takes the separate launches, a
// plain one the fused launch; both match the host.
TEST_F(QuantizeTest, CurrentScalingMatchesHostOnBothSidesOfItsSizeRule) {
  dispatch_ = true;
  const TestTensor t = MakeTensor(6000, 6000, 305, true);
  ASSERT_GT(t.rows * t.cols, kFusedCurrentScalingMaxTransposed);
  ASSERT_LE(t.rows * t.cols, kFusedCurrentScalingMax);
  for (bool transpose : {true, false}) {
    SCOPED_TRACE(transpose ? "+T (separate launches)" : "no transpose (fused)");
    ASSERT_NO_FATAL_FAILURE(CheckCurrentScaling(t, q::Fp8Format::kE5M2, transpose, true));
  }
}

TEST_F(QuantizeTest, CurrentScalingQuantizeOfAnEmptyTensorWritesScaleOne) {
  auto* scalars = Device<float>(3);
  auto* workspace = Device<float>(kCurrentScalingWorkspaceFloats);
  ASSERT_TRUE(scalars && workspace);
  CUDA_ASSERT(cudaMemset(scalars, 0xAB, 3 * sizeof(float)));
  CUDA_ASSERT(CurrentScalingQuantize(nullptr, 0, 64, q::Fp8Format::kE4M3, nullptr, nullptr, scalars,
                                     scalars + 1, scalars + 2, workspace, nullptr));
  CUDA_ASSERT(cudaDeviceSynchronize());
  std::vector<float> got;
  ASSERT_NO_FATAL_FAILURE(Fetch(scalars, 3, &got));
  CompareFloatBits(got, {0.0f, 1.0f, 1.0f}, 3, "amax, scale, scale_inv");
  EXPECT_EQ(CurrentScalingQuantize(nullptr, 4, 4, q::Fp8Format::kE4M3, nullptr, nullptr, nullptr,
                                   scalars, nullptr, workspace, nullptr),
            cudaErrorInvalidValue);
  EXPECT_EQ(CurrentScalingQuantize(nullptr, 0, 4, q::Fp8Format::kE4M3, nullptr, nullptr, nullptr,
                                   scalars, nullptr, nullptr, nullptr),
            cudaErrorInvalidValue);
}

// Full tiles with misaligned pointers: the scalar path on tiles the vector path would
// take, so both paths are checked on the same shapes.
TEST_F(QuantizeTest, MisalignedPointersTakeTheScalarPath) {
  for (const Shape s : {Shape{256, 512}, Shape{131, 257}}) {
    const TestTensor t = MakeTensor(s.rows, s.cols, 505, true);
    SCOPED_TRACE(Name(t, true) + " misaligned");
    ASSERT_NO_FATAL_FAILURE(CheckCastTranspose(t, q::Fp8Format::kE4M3, 3.0f, true, 1));
    ASSERT_NO_FATAL_FAILURE(CheckBlock(t, 1, true, true, 1));
    ASSERT_NO_FATAL_FAILURE(CheckBlock(t, 128, true, true, 1));
    ASSERT_NO_FATAL_FAILURE(CheckMxfp8(t, true, 1));
    ASSERT_NO_FATAL_FAILURE(CheckNvfp4(t, 1));
  }
}

}  // namespace
}  // namespace gemmprof::kernels
