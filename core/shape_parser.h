// Parses the seed tool's `--shapes` text (Transformer Engine's
// benchmarks/gemm/benchmark_gemm.py) into GEMM shapes.
#pragma once

#include <string_view>
#include <vector>

#include "core/gemm.h"
#include "core/status.h"

namespace gemmprof::core {

// Parses a comma-separated list of items. Each item is either `MxKxN` (three
// dimensions, 'x' or 'X' between them) or one size S meaning SxSxS. A dimension may be a
// range: START:END:STEP (arithmetic, END included when a step lands on it, CUTLASS's
// profiler syntax) or START:END:*F (geometric, F >= 2): `1024:8192:*2x4096x4096` is four
// shapes, `256:1024:256x512x512` four more. A ranged item expands to the product of its
// dimensions' values, M outermost, then K, then N; all items together may expand to at
// most kMaxExpandedShapes (counted before expanding). Spaces, tabs, CR
// and LF around an item are ignored; nothing else is: every dimension is plain decimal
// digits (no sign, no exponent, no fraction, no inner blanks), in 1..kMaxDim (2^31-1,
// limits.h), and M*K*N must fit in int64. The number of items is not limited here;
// ValidateJobSpec caps a job at kMaxShapes.
//
// Returns the shapes in input order, duplicates kept. Errors: InvalidArgument naming
// the item, its 1-based position and why (empty text, empty item, zero, sign,
// non-digit, wrong number of dimensions, out of range). Pure; thread-safe.
absl::StatusOr<std::vector<GemmShape>> ParseShapeList(std::string_view text);

// One size or one range of sizes as above (`1:16384:*2`), for lists of M such as
// --sweep-m; more than `limit` values is InvalidArgument. Messages do not name a field.
absl::StatusOr<std::vector<int64_t>> ParseSizeRange(std::string_view text, int64_t limit);

}  // namespace gemmprof::core
