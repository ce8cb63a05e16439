// One energy window (docs/measurement.md "Energy"): a graph replayed back to back while the
// board's energy counter is read on its update edges. The counter (NVML, millijoules)
// updates about every 100 ms on an H200, so a figure needs a window of about a second; the
// window runs from one update edge to a later one, and the GPU work completed between them
// is counted from events recorded after each launch, so the joules are that work's own.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <functional>

#include "core/result.h"
#include "core/status.h"
#include "kernels/timing/nvml_library.h"

namespace gemmprof::kernels {

struct EnergyWindowOptions {
  double min_window_s = 1.0;  // the window spans at least this long ...
  int32_t min_updates = 10;   // ... and at least this many counter updates
  double settle_s = 0.5;      // replays before the window opens, for the power state to settle
  double max_s = 30;          // give up (DeadlineExceeded) when the counter stalls this long
};

// Replays `launch` (one launch = `iterations_per_launch` iterations of the timed region,
// about `launch_ms` long) on `stream` back to back, the queue kept about 20 ms deep, and
// returns joules per iteration with the window's figures (core::Energy; idle_power_w and
// not_measured left to the caller). The stream is synchronized at the end.
// Errors: Unimplemented where the board has no energy counter; the launch's own errors.
absl::StatusOr<core::Energy> MeasureEnergyWindow(const NvmlDevice& nvml, cudaStream_t stream,
                                                 const std::function<absl::Status()>& launch,
                                                 int64_t iterations_per_launch, double launch_ms,
                                                 const EnergyWindowOptions& options);

// The board's power at rest: NVML's power reading (on recent boards an average over about
// a second) every 50 ms until ten readings in a row lie within 3% of their median, or
// `max_s` has passed; the median of the last ten. Right after other work the reading is
// still falling, so a single reading would report that work's power as idle.
absl::StatusOr<double> RestingPowerW(const NvmlDevice& nvml, double max_s = 3.0);

}  // namespace gemmprof::kernels
