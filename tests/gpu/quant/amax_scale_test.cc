// Amax, ComputeScale, ScaleFromHistory and RollAmaxHistory against the host rules of
// core/quant/quant.h, bit for bit.
#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "core/quant/quant.h"
#include "kernels/quant/quantize.h"
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

// DelayedCastTranspose (the cast and its programmatically dependent step launch) against
// the sequence it replaces, run on the same inputs: ScaleFromHistory, CastTranspose with
// the amax, RollAmaxHistory, ScaleFromHistory. Every output bit: the data, the transposed
// copy, the history (whose first entry is the step's amax), the scale the cast used (as
// scale_inv) and the next step's scale; three steps in a row, without a reset between
// them (the step leaves the amax 0).
TEST_F(ScaleTest, DelayedCastTransposeEqualsTheStepsItFuses) {
  struct Case {
    int64_t rows, cols;
    int32_t len;
  };
  const Case cases[] = {
      {7, 33, 1}, {131, 257, 1024}, {384, 512, 1500}, {1000, 130, 0}, {256, 4096, 16}};
  std::mt19937 rng(5);
  std::lognormal_distribution<float> dist(0.0f, 2.0f);
  for (const Case& c : cases) {
    const auto t = MakeTensor(c.rows, c.cols, 77, /*edges=*/c.rows == 131);
    const int64_t n = c.rows * c.cols;
    auto* x = Device<uint16_t>(n);
    auto* out_a = Device<uint8_t>(n);
    auto* out_b = Device<uint8_t>(n);
    auto* t_a = Device<uint8_t>(n);
    auto* t_b = Device<uint8_t>(n);
    auto* hist_a = Device<float>(std::max(c.len, 1));
    auto* hist_b = Device<float>(std::max(c.len, 1));
    auto* sc_a = Device<float>(4);  // scale, scale_inv, amax
    auto* sc_b = Device<float>(4);  // scale, scale_inv, amax
    ASSERT_TRUE(x && out_a && out_b && t_a && t_b && hist_a && hist_b && sc_a && sc_b);
    CUDA_ASSERT(cudaMemcpy(x, t.bits.data(), n * 2, cudaMemcpyHostToDevice));
    std::vector<float> hist(c.len);
    for (auto& h : hist) h = dist(rng);
    for (auto algo : {core::AmaxAlgo::kMax, core::AmaxAlgo::kMostRecent}) {
      for (auto f : {q::Fp8Format::kE4M3, q::Fp8Format::kE5M2}) {
        for (bool transpose : {true, false}) {
          SCOPED_TRACE(std::to_string(c.rows) + "x" + std::to_string(c.cols) + " len=" +
                       std::to_string(c.len) + " algo=" + std::string(core::ToString(algo)) +
                       " t=" + std::to_string(transpose));
          if (c.len > 0) {
            CUDA_ASSERT(cudaMemcpy(hist_a, hist.data(), c.len * 4, cudaMemcpyHostToDevice));
            CUDA_ASSERT(cudaMemcpy(hist_b, hist.data(), c.len * 4, cudaMemcpyHostToDevice));
          }
          CUDA_ASSERT(cudaMemset(sc_b, 0xAB, 8));
          CUDA_ASSERT(cudaMemset(sc_b + 2, 0, 4));  // the amax starts at 0
          // B's scale for the first step, as SeedHistory leaves it.
          CUDA_ASSERT(ScaleFromHistory(hist_b, c.len, algo, f, sc_b, nullptr, nullptr));
          const auto* bx = reinterpret_cast<const __nv_bfloat16*>(x);
          for (int step = 0; step < 3; ++step) {
            SCOPED_TRACE("step " + std::to_string(step));
            CUDA_ASSERT(ScaleFromHistory(hist_a, c.len, algo, f, sc_a, sc_a + 1, nullptr));
            CUDA_ASSERT(CastTranspose(bx, c.rows, c.cols, sc_a, f, out_a, transpose ? t_a : nullptr,
                                      sc_a + 2, nullptr));
            CUDA_ASSERT(RollAmaxHistory(hist_a, c.len, sc_a + 2, nullptr));
            CUDA_ASSERT(ScaleFromHistory(hist_a, c.len, algo, f, sc_a, nullptr, nullptr));
            CUDA_ASSERT(DelayedCastTranspose(bx, c.rows, c.cols, f, hist_b, c.len, algo, sc_b,
                                             sc_b + 1, out_b, transpose ? t_b : nullptr, sc_b + 2,
                                             nullptr));
            CUDA_ASSERT(cudaDeviceSynchronize());
            std::vector<uint8_t> a(n), b(n);
            CUDA_ASSERT(cudaMemcpy(a.data(), out_a, n, cudaMemcpyDeviceToHost));
            CUDA_ASSERT(cudaMemcpy(b.data(), out_b, n, cudaMemcpyDeviceToHost));
            EXPECT_EQ(a, b) << "out";
            if (transpose) {
              CUDA_ASSERT(cudaMemcpy(a.data(), t_a, n, cudaMemcpyDeviceToHost));
              CUDA_ASSERT(cudaMemcpy(b.data(), t_b, n, cudaMemcpyDeviceToHost));
              EXPECT_EQ(a, b) << "out_t";
            }
            std::vector<float> ha(c.len), hb(c.len), sa(3), sb(3);
            if (c.len > 0) {
              CUDA_ASSERT(cudaMemcpy(ha.data(), hist_a, c.len * 4, cudaMemcpyDeviceToHost));
              CUDA_ASSERT(cudaMemcpy(hb.data(), hist_b, c.len * 4, cudaMemcpyDeviceToHost));
              CompareFloatBits(hb, ha, c.len, "history");
            }
            CUDA_ASSERT(cudaMemcpy(sa.data(), sc_a, 12, cudaMemcpyDeviceToHost));
            CUDA_ASSERT(cudaMemcpy(sb.data(), sc_b, 12, cudaMemcpyDeviceToHost));
            CompareFloatBits({sb[0], sb[1]}, {sa[0], sa[1]}, 2, "next scale, scale_inv used");
            // Left at 0 for the next step (an empty tensor leaves its zero amax).
            EXPECT_EQ(FloatBits(sb[2]), 0u) << "amax after the step";
          }
        }
      }
    }
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
  EXPECT_EQ(DelayedCastTranspose(reinterpret_cast<const __nv_bfloat16*>(d), 1, 1,
                                 q::Fp8Format::kE4M3, nullptr, 4, core::AmaxAlgo::kMax, d, d + 1,
                                 reinterpret_cast<uint8_t*>(d + 2), nullptr, d + 3, nullptr),
            cudaErrorInvalidValue);  // a history length without a history
  cudaGetLastError();  // the rejected calls enqueue nothing; keep the error state clean
}

}  // namespace
}  // namespace gemmprof::kernels
