#include "report/claim.h"

namespace gemmprof::report {

std::string_view ToString(Claim c) {
  switch (c) {
    case Claim::kFaster:
      return "faster";
    case Claim::kSlower:
      return "slower";
    case Claim::kNoise:
      return "noise";
    case Claim::kIdentical:
      return "identical";
    case Claim::kUnknown:
      return "unknown";
  }
  return "?";
}

Claim ClaimOf(const core::stats::Interval& r) {
  if (!r.valid) return Claim::kUnknown;
  if (r.low == 1 && r.high == 1) return Claim::kIdentical;
  if (r.high < 1) return Claim::kFaster;
  if (r.low > 1) return Claim::kSlower;
  return Claim::kNoise;
}

}  // namespace gemmprof::report
