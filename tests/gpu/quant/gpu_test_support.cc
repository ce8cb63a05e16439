#include "tests/gpu/quant/gpu_test_support.h"

#include <cmath>
#include <limits>
#include <random>
#include <sstream>

#include "core/quant/quant.h"

namespace gemmprof::kernels::testing {
namespace {

namespace q = core::quant;

constexpr int kMaxReported = 8;

// Special values, each rounded to BF16 where placed.
const std::vector<float>& SpecialValues() {
  static const std::vector<float> v = {
      std::numeric_limits<float>::quiet_NaN(),
      -std::numeric_limits<float>::quiet_NaN(),
      std::numeric_limits<float>::infinity(),
      -std::numeric_limits<float>::infinity(),
      0.0f,
      -0.0f,
      448.0f,  // E4M3 max
      -448.0f,
      464.0f,    // E4M3 448/480 tie -> 448
      480.0f,    // saturates
      57344.0f,  // E5M2 max
      61440.0f,  // E5M2 57344/65536 tie -> saturates
      -65536.0f,
      1e30f,
      -3e38f,
      std::ldexp(1.0f, -9),   // E4M3 min subnormal
      std::ldexp(1.0f, -10),  // half of it: ties to zero
      std::ldexp(3.0f, -11),  // rounds up to the min subnormal
      std::ldexp(1.0f, -16),  // E5M2 min subnormal
      -std::ldexp(1.0f, -17),
      std::ldexp(1.0f, -126),  // fp32 min normal
      1e-39f,                  // BF16 subnormals
      -1e-40f,
      std::ldexp(1.0f, -133),  // smallest BF16 subnormal
      0.25f,
      0.75f,
      2.5f,
      5.0f,
      7.0f,  // E2M1 ties and saturation before scaling
  };
  return v;
}

void Set(TestTensor& t, int64_t r, int64_t c, float v) {
  const uint16_t bits = q::FloatToBf16Bits(v);
  t.bits[r * t.cols + c] = bits;
  t.values[r * t.cols + c] = q::Bf16BitsToFloat(bits);
}

void InjectEdges(TestTensor& t) {
  const int64_t n = t.rows * t.cols;
  const auto& specials = SpecialValues();
  for (size_t k = 0; k < specials.size(); ++k) {
    const int64_t i = (static_cast<int64_t>(k) * 9973 + 17) % n;
    Set(t, i / t.cols, i % t.cols, specials[k]);
  }
  // Whole blocks with unusual amaxes: zero (scale 1), subnormal only (scale overflow to
  // FLT_MAX / a huge MX multiplier), NaN only (amax 0 with NaN data).
  if (t.rows > 1) {
    for (int64_t c = 0; c < std::min<int64_t>(t.cols, 128); ++c) Set(t, 1, c, 0.0f);
  }
  if (t.rows > 2) {
    for (int64_t c = 0; c < std::min<int64_t>(t.cols, 128); ++c) {
      Set(t, 2, c, std::ldexp(static_cast<float>(c % 7) - 3.0f, -130));
    }
  }
  if (t.rows > 3) {
    for (int64_t c = 0; c < std::min<int64_t>(t.cols, 32); ++c) {
      Set(t, 3, c, std::numeric_limits<float>::quiet_NaN());
    }
  }
}

}  // namespace

TestTensor MakeTensor(int64_t rows, int64_t cols, uint32_t seed, bool edges, float stddev) {
  TestTensor t;
  t.rows = rows;
  t.cols = cols;
  t.bits.resize(rows * cols);
  t.values.resize(rows * cols);
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, stddev);
  for (int64_t i = 0; i < rows * cols; ++i) {
    t.bits[i] = q::FloatToBf16Bits(normal(rng));
    t.values[i] = q::Bf16BitsToFloat(t.bits[i]);
  }
  if (edges && rows * cols > 0) InjectEdges(t);
  return t;
}

int64_t CompareBytes(const std::vector<uint8_t>& got, const std::vector<uint8_t>& want,
                     int64_t cols, const std::string& what) {
  EXPECT_EQ(got.size(), want.size()) << what;
  int64_t bad = 0;
  std::ostringstream first;
  for (size_t i = 0; i < std::min(got.size(), want.size()); ++i) {
    if (got[i] == want[i]) continue;
    if (bad++ < kMaxReported) {
      first << "\n  [" << i / cols << ", " << i % cols << "] got 0x" << std::hex
            << static_cast<int>(got[i]) << " want 0x" << static_cast<int>(want[i]) << std::dec;
    }
  }
  EXPECT_EQ(bad, 0) << what << ": " << bad << " of " << want.size() << " bytes differ"
                    << first.str();
  return bad;
}

int64_t CompareFloatBits(const std::vector<float>& got, const std::vector<float>& want,
                         int64_t cols, const std::string& what) {
  EXPECT_EQ(got.size(), want.size()) << what;
  int64_t bad = 0;
  std::ostringstream first;
  for (size_t i = 0; i < std::min(got.size(), want.size()); ++i) {
    if (FloatBits(got[i]) == FloatBits(want[i])) continue;
    if (bad++ < kMaxReported) {
      first << "\n  [" << i / cols << ", " << i % cols << "] got " << got[i] << " (0x" << std::hex
            << FloatBits(got[i]) << ") want " << want[i] << " (0x" << FloatBits(want[i]) << ")"
            << std::dec;
    }
  }
  EXPECT_EQ(bad, 0) << what << ": " << bad << " of " << want.size() << " floats differ"
                    << first.str();
  return bad;
}

void GpuTest::SetUp() {
  int count = 0;
  const cudaError_t err = cudaGetDeviceCount(&count);
  // The gpu label runs only on GPU machines: a missing GPU is a failure, not a skip.
  ASSERT_EQ(err, cudaSuccess) << "no usable CUDA device: " << cudaGetErrorName(err) << " ("
                              << cudaGetErrorString(err) << ")";
  ASSERT_GT(count, 0) << "no CUDA device";
}

void GpuTest::TearDown() {
  for (void* p : allocations_) EXPECT_EQ(cudaFree(p), cudaSuccess);
  allocations_.clear();
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
}

}  // namespace gemmprof::kernels::testing
