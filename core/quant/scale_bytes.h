// The bytes one quantization must move, as each recipe defines it: its scales (ScaleBytes,
// the part of a quantization's bandwidth floor, docs/measurement.md, that is neither the
// BF16 input read nor the quantized data written) and the whole floor's bytes
// (QuantizationFloorBytes). Pure functions, no I/O.
#pragma once

#include <cstdint>

#include "core/enums.h"

namespace gemmprof::core::quant {

// Scales of one [rows, cols] tensor quantized along cols (K), a tensor's transposed copy
// being the same call on [cols, rows]:
//   fp8-block     4 B per 1x128 block (an activation or gradient), per 128x128 block
//                 (`weight`)
//   mxfp8         1 B (UE8M0) per 1x32 block
//   nvfp4         1 B (E4M3) per 1x16 block
//   fp8-rowwise, int8-rowwise  4 B per row
//   w8a16         2 B (BF16) per row (output channel); w4a16 2 B per `w4_group` of a row
//   bf16, fp8-current, fp8-delayed  0: one per-tensor scalar, not per element
// Partial blocks at an edge count whole. Logical sizes: the padding a GEMM's scale layout
// adds (cuBLASLt's 128x4 tiles, its 1x128 stride) is not counted.
double ScaleBytes(Recipe recipe, int64_t rows, int64_t cols, bool weight, int64_t w4_group = 128);

// Bytes per element of a recipe's quantized data: 1 (FP8, INT8), 0.5 (nvfp4's E2M1,
// w4a16's INT4), 0 for bf16 (nothing is quantized).
double QuantizedElementBytes(Recipe recipe);

// What one quantization of a [rows, cols] BF16 tensor must move, the bytes its bandwidth
// floor counts (docs/measurement.md, "What reports say"): `data`, the BF16 source read
// (twice for fp8-current and nvfp4, whose amax is a pass of its own before the cast) and
// the quantized data written, and `scales` (ScaleBytes); with `transposes` (a
// training step's transposed copy) the transposed data and its scales too, except for
// nvfp4, whose operands have none. bf16 moves nothing. The runner's floor
// (kernels/runner/cuda_runner_measure.cc) and gemmprof_quant_bench both count with it.
struct QuantizationBytes {
  double data = 0.0;
  double scales = 0.0;
};
QuantizationBytes QuantizationFloorBytes(Recipe recipe, int64_t rows, int64_t cols, bool weight,
                                         bool transposes, int64_t w4_group = 128);

}  // namespace gemmprof::core::quant
