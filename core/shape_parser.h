// Parses the seed tool's `--shapes` text (Transformer Engine's
// benchmarks/gemm/benchmark_gemm.py) into GEMM shapes.
#pragma once

#include <string_view>
#include <vector>

#include "core/gemm.h"
#include "core/status.h"

namespace gemmprof::core {

// Parses a comma-separated list of items. Each item is either `MxKxN` (three
// dimensions, 'x' or 'X' between them) or one size S meaning SxSxS. Spaces, tabs, CR
// and LF around an item are ignored; nothing else is: every dimension is plain decimal
// digits (no sign, no exponent, no fraction, no inner blanks), in 1..kMaxDim (2^31-1,
// limits.h), and M*K*N must fit in int64. The number of items is not limited here;
// ValidateJobSpec caps a job at kMaxShapes.
//
// Returns the shapes in input order, duplicates kept. Errors: InvalidArgument naming
// the item, its 1-based position and why (empty text, empty item, zero, sign,
// non-digit, wrong number of dimensions, out of range). Pure; thread-safe.
absl::StatusOr<std::vector<GemmShape>> ParseShapeList(std::string_view text);

}  // namespace gemmprof::core
