// Dense tensor-core peaks, for %-of-peak and roofline figures. A peak is taken at the SM
// clock an item actually ran at (NVML telemetry), not at the boost clock of a data sheet:
// under a power cap the clock moves by hundreds of MHz, and so does the ceiling.
#pragma once

#include <cstdint>

#include "core/enums.h"
#include "core/result.h"

namespace gemmprof::core {

// Dense (no sparsity) tensor-core FLOPs per SM per clock for the type `recipe`'s GEMM
// reads on compute capability `sm` (major*10+minor); 0 where the table has no entry
// (an unknown architecture, or a type the architecture lacks).
double DenseFlopsPerClockPerSm(int32_t sm, Recipe recipe);

// sm_count x clock x DenseFlopsPerClockPerSm, in FLOP/s; 0 when any factor is unknown.
double DensePeakFlops(int32_t sm, int32_t sm_count, double sm_clock_mhz, Recipe recipe);

// The SM clock an item ran at: the mean of its telemetry samples, or the middle of its
// min and max for results stored before the mean was recorded; 0 when not sampled.
double ItemSmClockMhz(const Telemetry& t);

}  // namespace gemmprof::core
