// When interleaved rounds stop: a fixed count, or the precision every comparison of a
// group can claim, or the time budget, or a round limit. Pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace gemmprof::measure {

struct StopOptions {
  int32_t fixed_rounds = 0;        // > 0: exactly this many rounds, nothing else counts
  double precision_target = 0.01;  // every gating interval's RelHalfWidth at or below
  double budget_s = 2.0;           // wall time of the rounds
  int32_t min_rounds = 10;         // never stop on precision before this many rounds
  int32_t max_rounds = 4096;
};

struct StopDecision {
  bool stop = false;
  std::string reason;  // "precision ±0.8% reached", "budget 2.0 s spent (±1.4%)",
                       // "fixed 100 rounds", "round limit 4096 (±1.2%)"
};

// `precision`: the worst RelHalfWidth of what gates (see GroupPrecision); NaN counts as
// not reached.
StopDecision ShouldStop(const StopOptions& options, int32_t rounds, double elapsed_s,
                        double precision);

// The worst relative half-width over every series' estimate and every pair's paired
// ratio: what a group's comparisons can claim. Series of < 2 values (or no series, or a
// pair without a valid paired ratio) give +infinity.
double GroupPrecision(const std::vector<std::vector<double>>& series);

}  // namespace gemmprof::measure
