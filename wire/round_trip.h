// A report as a client receives it, for the daemon's own readers that must show what the
// CLI shows. No generated code in this header: its callers stay off the wire types.
#pragma once

#include "core/job.h"
#include "core/status.h"

namespace gemmprof::wire {

// `report` converted to its wire form and back: what GetReport delivers to the CLI,
// whatever the conversion drops or normalizes. Errors: InvalidArgument as FromProto's
// (e.g. a measurement with a non-finite time, which the wire refuses).
absl::StatusOr<core::Report> RoundTrip(const core::Report& report);

}  // namespace gemmprof::wire
