// `gemmprof report --format json`: the stable, documented schema of REPORT_JSON.md
// ("schema_version": 1). Keys are in a fixed order, so the output diffs cleanly.
#pragma once

#include <string>

#include "core/job.h"

namespace gemmprof::client::render {

inline constexpr int kReportJsonSchemaVersion = 1;

// The whole report as pretty-printed JSON (2-space indent), ending in '\n'.
std::string RenderReportJson(const core::Report& report);

}  // namespace gemmprof::client::render
