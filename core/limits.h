// Numeric limits every user-supplied value is checked against (validation.h,
// shape_parser.h). One place, so messages and checks never disagree.
#pragma once

#include <cstdint>
#include <limits>

namespace gemmprof::core {

// Largest GEMM dimension (M, K or N) and largest model size field: 2^31 - 1, the
// int32 range cuBLASLt's matrix layouts accept.
inline constexpr int64_t kMaxDim = (int64_t{1} << 31) - 1;
// M*K*N of one GEMM (and micro_batch_size*sequence_length) must stay below this.
inline constexpr int64_t kMaxInt64 = std::numeric_limits<int64_t>::max();
inline constexpr int64_t kMinLayers = 1;
inline constexpr int64_t kMaxLayers = 10000;
inline constexpr int32_t kMaxWarmupIters = 10000;
// timed_iters: 0 = noise-aware rounds, else a fixed count in kMinTimedIters..kMaxTimedIters.
inline constexpr int32_t kMinTimedIters = 1;
inline constexpr int32_t kMaxTimedIters = 100000;
// Noise-aware rounds: the relative 95% half-width to stop at (0.1%..50%) and the rounds'
// time budget per distinct member.
inline constexpr double kMinPrecisionTarget = 0.001;
inline constexpr double kMaxPrecisionTarget = 0.5;
inline constexpr double kMinItemBudgetS = 0.05;
inline constexpr double kMaxItemBudgetS = 600.0;
// b2b_count: 0 = chosen per group, else GEMMs back to back in one graph (one is not
// back to back).
inline constexpr int32_t kMinB2bCount = 2;
inline constexpr int32_t kMaxB2bCount = 1000;
inline constexpr int32_t kMinAutotuneK = 1;
inline constexpr int32_t kMaxAutotuneK = 64;
inline constexpr int32_t kMinAmaxHistoryLen = 1;
inline constexpr int32_t kMaxAmaxHistoryLen = 65536;
inline constexpr double kMaxGpuWarmupS = 600.0;
inline constexpr int64_t kMaxShapes = 10000;
// Shapes a --shapes text may expand to through ranges (START:END:STEP), all items together.
inline constexpr int64_t kMaxExpandedShapes = 4096;
inline constexpr int64_t kMaxSweepEntries = 64;
inline constexpr int64_t kMaxTensorParallel = 1024;

// a*b, or false when the product of two non-negative values would exceed int64.
inline bool MulFits(int64_t a, int64_t b, int64_t* out) {
  return !__builtin_mul_overflow(a, b, out);
}

}  // namespace gemmprof::core
