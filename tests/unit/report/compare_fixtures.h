// Two synthetic jobs with known ratios and noise, for compare's analysis (report/) and
// its listing (client/render/).
#pragma once

#include <cstdint>
#include <utility>

#include "core/job.h"

namespace gemmprof::report::testing {

// A done fprop item of `r` (autocast) with median `ms`, p20/p80 at ms x (1 -/+ half_spread)
// and a stdev of `stdev_frac` x ms (power-capping outliers make it much wider).
core::ItemRecord CompareItem(const char* name, core::GemmShape s, core::Recipe r, double ms,
                             double half_spread, double stdev_frac);

// A: five bf16 GEMMs at 1 ms and one fp8-block GEMM only A has; B: the five at known
// ratios. "tight": half-spread 0.5% (threshold max(2%, 3 x sqrt(2) x 0.5%) = 2.12%);
// "noisy": half-spread 1.5% (6.36%); "outliers": tight p20-p80 but a 10% stdev, as on a
// power-capped GPU. B has a newer cuBLASLt.
std::pair<core::Report, core::Report> CompareJobs();

// An estimate at `ms` with a relative half-width `half` from `rounds` rounds.
core::Estimate CompareEstimate(double ms, double half, int32_t rounds = 30);

// A done bf16 item measured in rounds (the isolated estimate; b2b when b2b_ms > 0); its
// median is a decoy (123 ms), since the rounds' mean is the headline.
core::ItemRecord RoundsItem(const char* name, double ms, double half, double b2b_ms = 0);

// Telemetry as NVML gives it for one item.
void SetTelemetry(core::ItemRecord& item, double clock_mean, double clock_min, double power,
                  double temp, int64_t throttled, int64_t samples);

}  // namespace gemmprof::report::testing
