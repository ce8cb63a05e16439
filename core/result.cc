#include "core/result.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace gemmprof::core {
namespace {

// Linear interpolation between closest ranks on sorted data, q in [0, 1].
double Quantile(const std::vector<double>& sorted, double q) {
  if (sorted.size() == 1) return sorted.front();
  const double pos = q * static_cast<double>(sorted.size() - 1);
  const size_t lo = static_cast<size_t>(std::floor(pos));
  const size_t hi = std::min(lo + 1, sorted.size() - 1);
  const double frac = pos - static_cast<double>(lo);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * frac;
}

}  // namespace

SampleStats SampleStats::FromSamples(std::vector<double> samples_ms) {
  SampleStats s;
  if (samples_ms.empty()) return s;
  std::sort(samples_ms.begin(), samples_ms.end());
  s.count = static_cast<int64_t>(samples_ms.size());
  s.min_ms = samples_ms.front();
  s.max_ms = samples_ms.back();
  s.median_ms = Quantile(samples_ms, 0.5);
  s.p20_ms = Quantile(samples_ms, 0.2);
  s.p80_ms = Quantile(samples_ms, 0.8);
  s.mean_ms = std::accumulate(samples_ms.begin(), samples_ms.end(), 0.0) / s.count;
  double var = 0;
  for (double x : samples_ms) var += (x - s.mean_ms) * (x - s.mean_ms);
  s.stdev_ms = s.count > 1 ? std::sqrt(var / (s.count - 1)) : 0.0;
  return s;
}

}  // namespace gemmprof::core

namespace gemmprof::core {

double Estimate::RelHalfWidth() const {
  if (!present() || center_ms <= 0) return 0;
  return (ci_high_ms - ci_low_ms) / 2 / center_ms;
}

}  // namespace gemmprof::core
