// The one JSON document of a job: `gemmprof report --format json` and the daemon's
// /api/v1/jobs/ID/report, in the stable, documented schema of REPORT_JSON.md
// ("schema_version": 1). Keys are in a fixed order, so the output diffs cleanly. The job,
// device, timing and items come from the one mapping of record_json.h; the rest is the
// analysis of analysis.h, findings.h and notices.h.
#pragma once

#include <string>

#include "core/job.h"

namespace gemmprof::report {

inline constexpr int kJsonSchemaVersion = 1;

// The whole report as pretty-printed JSON (2-space indent), ending in '\n'.
std::string JsonDocument(const core::Report& report);

}  // namespace gemmprof::report
