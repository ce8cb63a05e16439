#include "measure/burst.h"

#include <algorithm>
#include <cmath>

#include "core/result.h"

namespace gemmprof::measure {
namespace {

// Per candidate and round.
constexpr double kWarmupMs = 2.0, kSamplesMs = 5.0;

int32_t Launches(double budget_ms, double ms, int32_t lo, int32_t hi) {
  return ms > 0 ? static_cast<int32_t>(std::clamp(std::ceil(budget_ms / ms),
                                                  static_cast<double>(lo), static_cast<double>(hi)))
                : hi;
}

double Median(std::vector<double> v) {
  return core::SampleStats::FromSamples(std::move(v)).median_ms;
}

}  // namespace

std::vector<absl::StatusOr<double>> TimeCandidates(CandidateTimer& timer, size_t candidates,
                                                   int rounds) {
  std::vector<int32_t> warmup(candidates, 1), samples(candidates, 1);
  std::vector<std::vector<double>> medians(candidates);
  std::vector<absl::Status> failed(candidates);
  for (int round = -1; round < rounds; ++round) {  // round -1: one launch sizes the rounds
    for (size_t i = 0; i < candidates; ++i) {
      if (!failed[i].ok()) continue;
      absl::StatusOr<std::vector<double>> ms =
          round < 0 ? timer.Time(i, 1, 1) : timer.Time(i, warmup[i], samples[i]);
      if (!ms.ok()) {
        failed[i] = ms.status();
        continue;
      }
      if (round < 0) {
        const double first = ms->empty() ? 0 : ms->front();
        warmup[i] = Launches(kWarmupMs, first, 1, 3);
        samples[i] = Launches(kSamplesMs, first, 3, 10);
        continue;
      }
      medians[i].push_back(Median(*std::move(ms)));
    }
  }
  std::vector<absl::StatusOr<double>> out;
  for (size_t i = 0; i < candidates; ++i) {
    if (failed[i].ok()) {
      out.push_back(Median(medians[i]));
    } else {
      out.push_back(failed[i]);
    }
  }
  return out;
}

int PickFastest(const std::vector<absl::StatusOr<double>>& ms, double margin) {
  int best = -1;
  for (size_t i = 0; i < ms.size(); ++i) {
    if (ms[i].ok() && (best < 0 || *ms[i] < *ms[best])) best = static_cast<int>(i);
  }
  // Within the margin of the incumbent the difference is noise, and the incumbent stays.
  if (best > 0 && ms[0].ok() && !(*ms[best] < (1 - margin) * *ms[0])) best = 0;
  return best;
}

std::vector<size_t> CloseTo(const std::vector<absl::StatusOr<double>>& ms, size_t kept,
                            double margin) {
  std::vector<size_t> close;
  if (kept >= ms.size() || !ms[kept].ok()) return close;
  for (size_t c = 1; c < ms.size(); ++c) {
    if (c != kept && ms[c].ok() && *ms[c] <= (1 + margin) * *ms[kept]) close.push_back(c);
  }
  return close;
}

}  // namespace gemmprof::measure
