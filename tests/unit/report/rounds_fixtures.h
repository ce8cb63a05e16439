// Results measured in interleaved rounds, built from per-round series so every interval
// is known: a small dense model (2 layers, 4 GEMMs per pass, 3 passes), bf16 and three
// FP8 recipes in autocast and prequant. All items of one GEMM form one group (paired);
// prequant fp8-current and fp8-delayed are the same GPU work, measured once.
#pragma once

#include <cstdint>
#include <map>

#include "core/job.h"

namespace gemmprof::report::testing {

struct RoundsOptions {
  uint32_t seed = 1;
  int32_t rounds = 30;
  double noise = 0.01;  // relative per-round noise of each item (normal)
  double drift = 0.02;  // relative per-round drift common to a whole group
  // Relative slowdown of each recipe over its nominal time (e.g. 0.02: 2% slower).
  std::map<core::Recipe, double> effect;
  bool b2b = true;
  bool share_prequant = true;  // fp8-delayed prequant shares fp8-current's measurement
  bool paired = true;          // false: every item has its own group_uid
};

// A finished job measured in rounds (timed_iters 0: noise-aware).
core::Report RoundsReport(const RoundsOptions& options = {});

// An energy window's figure on `m`: `joules` per iteration with a relative half-width
// `half`, from 12 counter periods of a 1.2 s window at 600 W.
void SetEnergy(core::Measurement& m, double joules, double half = 0.01);

}  // namespace gemmprof::report::testing
