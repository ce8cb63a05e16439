// The kernel-choice burst: before an item's rounds, candidate ways to run its GEMM
// (cuBLASLt's heuristic answers, CUTLASS forms) are timed in a short burst of
// interleaved rounds and one is kept. A power-capped GPU runs such a burst at higher
// clocks than the item's rounds, so the burst ranks candidates; forms it finds close are
// decided in the rounds themselves (rounds.h, MemberSpec::forms).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/status.h"

namespace gemmprof::measure {

// Times one candidate at a time. A failed launch returns its error; the timer recovers
// what it can of the device before returning it (the candidate then sits out).
class CandidateTimer {
 public:
  virtual ~CandidateTimer() = default;
  // `warmup` untimed launches, then `samples` timed ones: ms per launch.
  virtual absl::StatusOr<std::vector<double>> Time(size_t candidate, int32_t warmup,
                                                   int32_t samples) = 0;
};

// Times `candidates` candidates in `rounds` interleaved rounds, so clock and power drift
// spreads over all of them: per candidate the median of its rounds' medians, or the error
// of its first failed launch. One launch each first sizes a round's visit: up to 3
// warm-up launches and 10 samples, fewer for a long GEMM (about 2 ms of warm-up and 5 ms
// of samples, at least 1 and 3), so that a job of big GEMMs does not spend seconds
// choosing.
std::vector<absl::StatusOr<double>> TimeCandidates(CandidateTimer& timer, size_t candidates,
                                                   int rounds);

// The candidate to keep: 0 (the incumbent: cuBLASLt's first answer, or cuBLASLt against
// CUTLASS) unless another ran more than `margin` faster, then the fastest of those; where
// the incumbent failed, the fastest that ran. -1 when none ran.
int PickFastest(const std::vector<absl::StatusOr<double>>& ms, double margin = 0.01);

// The candidates other than 0 and `kept` that ran within `margin` of it (ms at most
// (1 + margin) times kept's): the ones the item's rounds decide between.
std::vector<size_t> CloseTo(const std::vector<absl::StatusOr<double>>& ms, size_t kept,
                            double margin);

}  // namespace gemmprof::measure
