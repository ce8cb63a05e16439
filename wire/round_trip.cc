#include "wire/round_trip.h"

#include "wire/convert.h"

namespace gemmprof::wire {

absl::StatusOr<core::Report> RoundTrip(const core::Report& report) {
  return FromProto(ToProto(report));
}

}  // namespace gemmprof::wire
