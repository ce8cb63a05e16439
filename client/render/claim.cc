#include "client/render/claim.h"

#include "client/render/format.h"

namespace gemmprof::client::render {

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

std::string FormatRatioCi(const core::stats::Interval& r) {
  std::string s = FormatRatio(r.center);
  if (!r.valid) return s;
  // A third decimal when two would print a tight interval as a single point.
  const int d = FormatFixed(r.low, 2) == FormatFixed(r.high, 2) && r.low != r.high ? 3 : 2;
  return s + " [" + FormatFixed(r.low, d) + "\u2013" + FormatFixed(r.high, d) + "]";
}

std::string FormatMsCi(const core::stats::Interval& ms) {
  std::string s = FormatMs(ms.center) + " ms";
  if (ms.valid) s += " [" + FormatMs(ms.low) + "\u2013" + FormatMs(ms.high) + "]";
  return s;
}

std::string FormatPlusMinus(double rel_half_width) {
  return "\u00b1" + FormatFixed(100 * rel_half_width, 1) + "%";
}

}  // namespace gemmprof::client::render
