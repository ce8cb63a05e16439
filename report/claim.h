// The only road from numbers to "faster" / "slower" words in reports, findings and
// compare: a time ratio's 95% interval decides, never a bare difference of centers.
#pragma once

#include <string_view>

#include "core/stats.h"

namespace gemmprof::report {

enum class Claim {
  kFaster,     // the whole interval below 1
  kSlower,     // the whole interval above 1
  kNoise,      // the interval holds 1: no order can be claimed
  kIdentical,  // exactly [1, 1]: the same series (the same GPU work, one measurement)
  kUnknown,    // no interval (results stored before interleaved rounds, or < 2 rounds)
};
std::string_view ToString(Claim c);

// What a time ratio subject / reference (> 1: the subject is slower) supports.
Claim ClaimOf(const core::stats::Interval& time_ratio);

}  // namespace gemmprof::report
