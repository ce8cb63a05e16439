// Amax, ComputeScale, ScaleFromHistory and RollAmaxHistory against the host rules of
// core/quant/quant.h, bit for bit.
#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "kernels/quant/quantize.h"
#include "core/quant/quant.h"
#include "tests/gpu/quant/gpu_test_support.h"

namespace gemmprof::kernels {
namespace {

namespace q = core::quant;
using testing::CompareFloatBits;
using testing::FloatBits;
using testing::kPoisons;
using testing::MakeTensor;

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNan = std::numeric_limits<float>::quiet_NaN();

class AmaxTest : public testing::GpuTest {
 protected:
  // Device amax of `bits` (offset by `offset` elements from a 16-byte aligned base).
  void Check(const std::vector<uint16_t>& bits, const std::vector<float>& values, int offset) {
    SCOPED_TRACE("n=" + std::to_string(bits.size()) + " offset=" + std::to_string(offset));
    auto* base = Device<uint16_t>(bits.size() + offset);
    auto* amax = Device<float>(1);
    ASSERT_NE(base, nullptr);
    ASSERT_NE(amax, nullptr);
    auto* x = base + offset;
    if (!bits.empty()) {
      CUDA_ASSERT(cudaMemcpy(x, bits.data(), bits.size() * 2, cudaMemcpyHostToDevice));
    }
    const float want = q::Amax(values);
    for (uint8_t poison : kPoisons) {
      CUDA_ASSERT(cudaMemset(amax, poison, sizeof(float)));
      CUDA_ASSERT(Amax(reinterpret_cast<const __nv_bfloat16*>(x), bits.size(), amax, nullptr));
      float got = 0;
      CUDA_ASSERT(cudaMemcpy(&got, amax, sizeof(float), cudaMemcpyDeviceToHost));
      EXPECT_EQ(FloatBits(got), FloatBits(want)) << "got " << got << " want " << want;
    }
  }
};

TEST_F(AmaxTest, RandomAndEdgeTensorsOfManySizes) {
  const int64_t sizes[] = {0, 1, 7, 8, 9, 33, 1000, 4097, 1 << 20, 33 * 4096 + 5};
  for (int64_t n : sizes) {
    for (bool edges : {false, true}) {
      const auto t = MakeTensor(1, n, 17 + static_cast<uint32_t>(n), edges);
      ASSERT_NO_FATAL_FAILURE(Check(t.bits, t.values, 0));
      ASSERT_NO_FATAL_FAILURE(Check(t.bits, t.values, 1));  // misaligned: scalar path
    }
  }
}

TEST_F(AmaxTest, NanIsIgnoredAndInfWins) {
  std::vector<float> values(4099, kNan);
  std::vector<uint16_t> bits(values.size());
  for (size_t i = 0; i < values.size(); ++i) bits[i] = q::FloatToBf16Bits(values[i]);
  values.assign(values.size(), q::Bf16BitsToFloat(bits[0]));
  ASSERT_NO_FATAL_FAILURE(Check(bits, values, 0));  // all NaN -> 0
  bits[4000] = q::FloatToBf16Bits(-kInf);
  values[4000] = -kInf;
  ASSERT_NO_FATAL_FAILURE(Check(bits, values, 0));  // -Inf -> +Inf
  bits[5] = q::FloatToBf16Bits(-3.0f);
  values[5] = -3.0f;
  bits[4000] = q::FloatToBf16Bits(2.0f);
  values[4000] = 2.0f;
  ASSERT_NO_FATAL_FAILURE(Check(bits, values, 0));  // 3
}

// Amax values that exercise every branch of R5 (zero, non-finite, overflow to FLT_MAX,
// negative, ordinary).
std::vector<float> ScaleProbeAmaxes() {
  std::vector<float> v = {
      0.0f, -0.0f,  kInf,     -kInf, kNan,  1e-40f, 1e-45f, std::ldexp(1.0f, -126),
      1.0f, 448.0f, 57344.0f, 3e38f, -2.5f, 0.1f,   1e-30f};
  std::mt19937 rng(5);
  std::lognormal_distribution<float> dist(0.0f, 8.0f);
  for (int i = 0; i < 64; ++i) v.push_back(dist(rng));
  return v;
}

class ScaleTest : public testing::GpuTest {};

TEST_F(ScaleTest, ComputeScaleMatchesHostForEveryAmaxClass) {
  const std::vector<float> amaxes = ScaleProbeAmaxes();
  const size_t n = amaxes.size();
  auto* d_amax = Device<float>(n);
  auto* d_scale = Device<float>(n);
  auto* d_inv = Device<float>(n);
  ASSERT_TRUE(d_amax && d_scale && d_inv);
  CUDA_ASSERT(cudaMemcpy(d_amax, amaxes.data(), n * 4, cudaMemcpyHostToDevice));
  for (auto f : {q::Fp8Format::kE4M3, q::Fp8Format::kE5M2}) {
    std::vector<float> want_scale(n), want_inv(n);
    for (size_t i = 0; i < n; ++i) {
      want_scale[i] = q::ScaleFromAmax(amaxes[i], f);
      want_inv[i] = 1.0f / want_scale[i];
    }
    for (uint8_t poison : kPoisons) {
      CUDA_ASSERT(cudaMemset(d_scale, poison, n * 4));
      CUDA_ASSERT(cudaMemset(d_inv, poison, n * 4));
      for (size_t i = 0; i < n; ++i) {
        CUDA_ASSERT(ComputeScale(d_amax + i, f, d_scale + i, d_inv + i, nullptr));
      }
      std::vector<float> scale(n), inv(n);
      CUDA_ASSERT(cudaMemcpy(scale.data(), d_scale, n * 4, cudaMemcpyDeviceToHost));
      CUDA_ASSERT(cudaMemcpy(inv.data(), d_inv, n * 4, cudaMemcpyDeviceToHost));
      CompareFloatBits(scale, want_scale, n, "scale");
      CompareFloatBits(inv, want_inv, n, "scale_inv");
    }
  }
}

TEST_F(ScaleTest, ScaleFromHistoryMatchesDelayedScale) {
  const int32_t lengths[] = {0, 1, 2, 31, 1024, 1500, 5000};
  std::mt19937 rng(11);
  std::lognormal_distribution<float> dist(0.0f, 4.0f);
  auto* d_scale = Device<float>(1);
  auto* d_inv = Device<float>(1);
  auto* d_hist = Device<float>(5000);
  ASSERT_TRUE(d_scale && d_inv && d_hist);
  for (int32_t len : lengths) {
    for (bool specials : {false, true}) {
      std::vector<float> hist(len);
      for (auto& h : hist) h = dist(rng);
      if (specials && len > 0) {
        hist[len / 2] = kNan;
        hist[0] = len % 2 ? kNan : -7.0f;  // most recent: NaN or negative
        if (len > 3) hist[len - 1] = kInf;
      }
      if (len > 0) CUDA_ASSERT(cudaMemcpy(d_hist, hist.data(), len * 4, cudaMemcpyHostToDevice));
      for (auto algo : {core::AmaxAlgo::kMax, core::AmaxAlgo::kMostRecent}) {
        for (auto f : {q::Fp8Format::kE4M3, q::Fp8Format::kE5M2}) {
          SCOPED_TRACE("len=" + std::to_string(len) + " specials=" + std::to_string(specials) +
                       " algo=" + std::string(core::ToString(algo)));
          const float want = q::DelayedScale(hist, algo, f);
          for (uint8_t poison : kPoisons) {
            CUDA_ASSERT(cudaMemset(d_scale, poison, 4));
            CUDA_ASSERT(cudaMemset(d_inv, poison, 4));
            CUDA_ASSERT(ScaleFromHistory(d_hist, len, algo, f, d_scale, d_inv, nullptr));
            float scale = 0, inv = 0;
            CUDA_ASSERT(cudaMemcpy(&scale, d_scale, 4, cudaMemcpyDeviceToHost));
            CUDA_ASSERT(cudaMemcpy(&inv, d_inv, 4, cudaMemcpyDeviceToHost));
            EXPECT_EQ(FloatBits(scale), FloatBits(want)) << scale << " vs " << want;
            EXPECT_EQ(FloatBits(inv), FloatBits(1.0f / want)) << inv;
          }
        }
      }
    }
  }
}

TEST_F(ScaleTest, RollAmaxHistoryShiftsAndInserts) {
  const int32_t lengths[] = {1, 2, 1023, 1024, 1025, 3000};
  auto* d_hist = Device<float>(3000);
  auto* d_new = Device<float>(1);
  ASSERT_TRUE(d_hist && d_new);
  for (int32_t len : lengths) {
    SCOPED_TRACE("len=" + std::to_string(len));
    std::vector<float> hist(len);
    for (int32_t i = 0; i < len; ++i) hist[i] = static_cast<float>(i) + 0.5f;
    const float fresh = 12345.0f;
    std::vector<float> want(len);
    want[0] = fresh;
    for (int32_t i = 1; i < len; ++i) want[i] = hist[i - 1];
    CUDA_ASSERT(cudaMemcpy(d_hist, hist.data(), len * 4, cudaMemcpyHostToDevice));
    CUDA_ASSERT(cudaMemcpy(d_new, &fresh, 4, cudaMemcpyHostToDevice));
    CUDA_ASSERT(RollAmaxHistory(d_hist, len, d_new, nullptr));
    std::vector<float> got(len);
    CUDA_ASSERT(cudaMemcpy(got.data(), d_hist, len * 4, cudaMemcpyDeviceToHost));
    CompareFloatBits(got, want, len, "history");
  }
}

TEST_F(ScaleTest, InvalidArgumentsAreRejected) {
  auto* d = Device<float>(4);
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(Amax(nullptr, 5, d, nullptr), cudaErrorInvalidValue);
  EXPECT_EQ(
      ScaleFromHistory(d, -1, core::AmaxAlgo::kMax, q::Fp8Format::kE4M3, d + 1, d + 2, nullptr),
      cudaErrorInvalidValue);
  EXPECT_EQ(BlockQuantize(reinterpret_cast<const __nv_bfloat16*>(d), 1, 1, 64, true,
                          reinterpret_cast<uint8_t*>(d + 1), d + 2, nullptr, nullptr, nullptr),
            cudaErrorInvalidValue);
  cudaGetLastError();  // the rejected calls enqueue nothing; keep the error state clean
}

}  // namespace
}  // namespace gemmprof::kernels
