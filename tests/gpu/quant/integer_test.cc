// The serving recipes' quantization kernels against the host numerics (core/quant/
// integer_quant.h, rules I1-I4), bit for bit: Int8RowwiseQuantize (per token, both of its
// launch forms), W8Quantize, W4Quantize (groups 64 and 128, the packing's nibbles), and
// the dequantizations the fp32 check reads; random normal tensors and tensors with edge
// values (zeros, NaN, Inf, subnormals, values beyond every range).
#include <cuda_bf16.h>

#include <string>
#include <vector>

#include "core/quant/integer_quant.h"
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

std::vector<uint8_t> AsBytes(const std::vector<int8_t>& v) {
  return std::vector<uint8_t>(v.begin(), v.end());
}

std::vector<float> Bf16ToFloats(const std::vector<uint16_t>& bits) {
  std::vector<float> out(bits.size());
  for (size_t i = 0; i < bits.size(); ++i) {
    const uint32_t u = static_cast<uint32_t>(bits[i]) << 16;
    std::memcpy(&out[i], &u, sizeof(float));
  }
  return out;
}

class IntegerQuantizeTest : public testing::GpuTest {
 protected:
  const __nv_bfloat16* Upload(const TestTensor& t, int misalign = 0) {
    auto* base = Device<uint16_t>(t.bits.size() + misalign);
    EXPECT_NE(base, nullptr);
    if (base == nullptr) return nullptr;
    EXPECT_EQ(cudaMemcpy(base + misalign, t.bits.data(), t.bits.size() * 2, cudaMemcpyHostToDevice),
              cudaSuccess);
    return reinterpret_cast<const __nv_bfloat16*>(base + misalign);
  }

  // The device's dequantization of what it quantized, against the host's.
  void CheckDequantized(float* got_dev, const std::vector<float>& want, const std::string& what) {
    std::vector<float> got(want.size());
    CUDA_ASSERT(cudaDeviceSynchronize());
    CUDA_ASSERT(
        cudaMemcpy(got.data(), got_dev, got.size() * sizeof(float), cudaMemcpyDeviceToHost));
    CompareFloatBits(got, want, 1, what);
  }

  void CheckInt8Rowwise(const TestTensor& t, int misalign) {
    const int64_t rows = t.rows, cols = t.cols, n = rows * cols;
    const q::Int8RowScaled want = q::QuantizeInt8Rowwise(t.values, rows, cols);
    const __nv_bfloat16* x = Upload(t, misalign);
    auto* out = Device<int8_t>(n + misalign);
    auto* sc = Device<float>(rows);
    auto* deq = Device<float>(n);
    ASSERT_TRUE(x && out && sc && deq);
    for (uint8_t poison : kPoisons) {
      CUDA_ASSERT(cudaMemset(out, poison, n + misalign));
      CUDA_ASSERT(cudaMemset(sc, poison, rows * sizeof(float)));
      CUDA_ASSERT(Int8RowwiseQuantize(x, rows, cols, out + misalign, sc, nullptr));
      CUDA_ASSERT(cudaDeviceSynchronize());
      std::vector<int8_t> got(n);
      CUDA_ASSERT(cudaMemcpy(got.data(), out + misalign, n, cudaMemcpyDeviceToHost));
      CompareBytes(AsBytes(got), AsBytes(want.data), cols, "int8");
      std::vector<float> scales(rows);
      CUDA_ASSERT(cudaMemcpy(scales.data(), sc, rows * sizeof(float), cudaMemcpyDeviceToHost));
      CompareFloatBits(scales, want.scale_inv, 1, "scale_inv");
    }
    CUDA_ASSERT(DequantizeInt8Rowwise(out + misalign, sc, rows, cols, deq, nullptr));
    CheckDequantized(deq, q::Dequantize(want), "dequantized");
  }

  void CheckW8(const TestTensor& t) {
    const int64_t rows = t.rows, cols = t.cols, n = rows * cols;
    const q::Int8ChannelScaled want = q::QuantizeW8(t.values, rows, cols);
    const __nv_bfloat16* x = Upload(t);
    auto* out = Device<int8_t>(n);
    auto* sc = Device<uint16_t>(rows);
    auto* deq = Device<float>(n);
    ASSERT_TRUE(x && out && sc && deq);
    for (uint8_t poison : kPoisons) {
      CUDA_ASSERT(cudaMemset(out, poison, n));
      CUDA_ASSERT(cudaMemset(sc, poison, rows * 2));
      CUDA_ASSERT(W8Quantize(x, rows, cols, out, reinterpret_cast<__nv_bfloat16*>(sc), nullptr));
      CUDA_ASSERT(cudaDeviceSynchronize());
      std::vector<int8_t> got(n);
      CUDA_ASSERT(cudaMemcpy(got.data(), out, n, cudaMemcpyDeviceToHost));
      CompareBytes(AsBytes(got), AsBytes(want.data), cols, "int8");
      std::vector<uint16_t> scale_bits(rows);
      CUDA_ASSERT(cudaMemcpy(scale_bits.data(), sc, rows * 2, cudaMemcpyDeviceToHost));
      CompareFloatBits(Bf16ToFloats(scale_bits), want.scales, 1, "scales");
    }
    CUDA_ASSERT(
        DequantizeW8(out, reinterpret_cast<const __nv_bfloat16*>(sc), rows, cols, deq, nullptr));
    CheckDequantized(deq, q::Dequantize(want), "dequantized");
  }

  void CheckW4(const TestTensor& t, int64_t group) {
    const int64_t rows = t.rows, cols = t.cols, bytes = rows * cols / 2;
    const int64_t groups = (cols + group - 1) / group;
    const q::Int4GroupScaled want = q::QuantizeW4(t.values, rows, cols, group);
    const __nv_bfloat16* x = Upload(t);
    auto* out = Device<uint8_t>(bytes);
    auto* sc = Device<uint16_t>(rows * groups);
    auto* deq = Device<float>(rows * cols);
    ASSERT_TRUE(x && out && sc && deq);
    for (uint8_t poison : kPoisons) {
      CUDA_ASSERT(cudaMemset(out, poison, bytes));
      CUDA_ASSERT(cudaMemset(sc, poison, rows * groups * 2));
      CUDA_ASSERT(
          W4Quantize(x, rows, cols, group, out, reinterpret_cast<__nv_bfloat16*>(sc), nullptr));
      CUDA_ASSERT(cudaDeviceSynchronize());
      std::vector<uint8_t> got(bytes);
      CUDA_ASSERT(cudaMemcpy(got.data(), out, bytes, cudaMemcpyDeviceToHost));
      CompareBytes(got, want.packed, cols / 2, "packed int4");
      // The device's scales are [groups, rows] (rows fastest), the host's [rows, groups].
      std::vector<uint16_t> scale_bits(rows * groups);
      CUDA_ASSERT(cudaMemcpy(scale_bits.data(), sc, scale_bits.size() * 2, cudaMemcpyDeviceToHost));
      const std::vector<float> dev = Bf16ToFloats(scale_bits);
      std::vector<float> got_scales(rows * groups);
      for (int64_t r = 0; r < rows; ++r) {
        for (int64_t g = 0; g < groups; ++g) got_scales[r * groups + g] = dev[g * rows + r];
      }
      CompareFloatBits(got_scales, want.scales, groups, "scales");
    }
    CUDA_ASSERT(DequantizeW4(out, reinterpret_cast<const __nv_bfloat16*>(sc), rows, cols, group,
                             deq, nullptr));
    CheckDequantized(deq, q::Dequantize(want), "dequantized");
  }
};

TEST_F(IntegerQuantizeTest, Int8RowwiseMatchesHostOnBothPathsAndEdgeValues) {
  struct Shape {
    int64_t rows, cols;
  };
  // On-chip vector path (cols % 8 == 0, <= 16384) and the scalar path (odd, longer,
  // misaligned).
  for (Shape s : std::vector<Shape>{{1, 1}, {7, 13}, {16, 4096}, {3, 16385}, {128, 14336}}) {
    for (bool edges : {false, true}) {
      const TestTensor t = MakeTensor(s.rows, s.cols, 808, edges, edges ? 1.0f : 30.0f);
      for (int misalign : {0, 1}) {
        SCOPED_TRACE(std::to_string(s.rows) + "x" + std::to_string(s.cols) +
                     (edges ? " edges" : " normal") + " misalign " + std::to_string(misalign));
        ASSERT_NO_FATAL_FAILURE(CheckInt8Rowwise(t, misalign));
      }
    }
  }
}

TEST_F(IntegerQuantizeTest, W8MatchesHostWithEdgeValues) {
  for (auto [rows, cols] : std::vector<std::pair<int64_t, int64_t>>{{1, 1}, {9, 333}, {64, 4096}}) {
    for (bool edges : {false, true}) {
      SCOPED_TRACE(std::to_string(rows) + "x" + std::to_string(cols) + (edges ? " edges" : ""));
      ASSERT_NO_FATAL_FAILURE(CheckW8(MakeTensor(rows, cols, 909, edges, edges ? 1.0f : 0.02f)));
    }
  }
}

TEST_F(IntegerQuantizeTest, W4MatchesHostForBothGroupSizesAndAShortLastGroup) {
  // cols 200: a short last group; 4096: whole groups.
  for (auto [rows, cols] : std::vector<std::pair<int64_t, int64_t>>{{5, 200}, {64, 4096}}) {
    for (int64_t group : {64, 128}) {
      for (bool edges : {false, true}) {
        SCOPED_TRACE(std::to_string(rows) + "x" + std::to_string(cols) + " group " +
                     std::to_string(group) + (edges ? " edges" : ""));
        ASSERT_NO_FATAL_FAILURE(
            CheckW4(MakeTensor(rows, cols, 1001, edges, edges ? 1.0f : 0.02f), group));
      }
    }
  }
}

TEST_F(IntegerQuantizeTest, W4RefusesOddShapes) {
  auto* x = Device<__nv_bfloat16>(64);
  auto* out = Device<uint8_t>(64);
  auto* sc = Device<__nv_bfloat16>(64);
  ASSERT_TRUE(x && out && sc);
  EXPECT_EQ(W4Quantize(x, 1, 63, 64, out, sc, nullptr), cudaErrorInvalidValue);
  EXPECT_EQ(W4Quantize(x, 1, 64, 63, out, sc, nullptr), cudaErrorInvalidValue);
  EXPECT_EQ(W4Quantize(x, -1, 64, 64, out, sc, nullptr), cudaErrorInvalidValue);
}

}  // namespace
}  // namespace gemmprof::kernels
