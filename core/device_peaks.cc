#include "core/device_peaks.h"

namespace gemmprof::core {
namespace {

enum class TensorType { kBf16, kFp8, kFp4 };

TensorType TypeOf(Recipe recipe) {
  switch (recipe) {
    case Recipe::kBf16:
    // Weight-only recipes widen the weight to BF16 and run BF16 tensor cores.
    case Recipe::kW8a16:
    case Recipe::kW4a16:
      return TensorType::kBf16;
    case Recipe::kNvfp4:
      return TensorType::kFp4;
    default:
      return TensorType::kFp8;
  }
}

// Per SM per clock, dense. Derived from NVIDIA's published dense peaks divided by
// SMs x the clock they are quoted at: A100 SXM 312 TFLOP/s BF16 at 108 SMs x 1410 MHz
// (2048); L40S 362 BF16 / 733 FP8 at 142 SMs x 2520 MHz (1024 / 2048); H100 SXM 989 BF16 /
// 1979 FP8 at 132 SMs x 1830 MHz (4096 / 8192; H200 has the same SMs); B200 2.25 PF BF16 /
// 4.5 PF FP8 / 9 PF FP4 dense (8192 / 16384 / 32768 per SM per clock, twice Hopper's).
double PerClock(int32_t sm, TensorType t) {
  const int32_t major = sm / 10;
  if (sm == 80 || sm == 86 || sm == 87) return t == TensorType::kBf16 ? 2048 : 0;
  if (sm == 89) {
    return t == TensorType::kBf16 ? 1024 : t == TensorType::kFp8 ? 2048 : 0;
  }
  if (major == 9) {
    return t == TensorType::kBf16 ? 4096 : t == TensorType::kFp8 ? 8192 : 0;
  }
  if (sm == 100 || sm == 103) {
    return t == TensorType::kBf16 ? 8192 : t == TensorType::kFp8 ? 16384 : 32768;
  }
  return 0;
}

}  // namespace

double DenseFlopsPerClockPerSm(int32_t sm, Recipe recipe) { return PerClock(sm, TypeOf(recipe)); }

double DensePeakFlops(int32_t sm, int32_t sm_count, double sm_clock_mhz, Recipe recipe) {
  if (sm_count <= 0 || !(sm_clock_mhz > 0)) return 0;
  return static_cast<double>(sm_count) * sm_clock_mhz * 1e6 * DenseFlopsPerClockPerSm(sm, recipe);
}

double ItemSmClockMhz(const Telemetry& t) {
  if (t.sm_clock_mhz_mean > 0) return t.sm_clock_mhz_mean;
  if (t.sm_clock_mhz_min > 0 && t.sm_clock_mhz_max > 0)
    return 0.5 * (t.sm_clock_mhz_min + t.sm_clock_mhz_max);
  return 0;
}

}  // namespace gemmprof::core
