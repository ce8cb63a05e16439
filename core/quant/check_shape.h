// The quantizers' shape check (internal to core/quant): they are pure functions over
// trusted shapes (callers validate user input), so a mismatch is a programming error and
// stops the process loudly rather than reading out of bounds.
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <span>

namespace gemmprof::core::quant {

inline void CheckShape(std::span<const float> x, int64_t rows, int64_t cols, const char* fn) {
  if (rows < 0 || cols < 0 || static_cast<int64_t>(x.size()) != rows * cols) {
    std::fprintf(stderr, "gemmprof::core::quant::%s: %zu elements for shape [%lld, %lld]\n", fn,
                 x.size(), static_cast<long long>(rows), static_cast<long long>(cols));
    std::abort();
  }
}

}  // namespace gemmprof::core::quant
