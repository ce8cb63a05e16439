// The one JSON document of a job: `gemmprof report --format json` and the daemon's
// /api/v1/jobs/ID/report, in the stable, documented schema of REPORT_JSON.md
// ("schema_version": 1). Keys are in a fixed order, so the output diffs cleanly.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "core/job.h"

namespace gemmprof::report {

inline constexpr int kJsonSchemaVersion = 1;

// The whole report as pretty-printed JSON (2-space indent), ending in '\n'.
std::string JsonDocument(const core::Report& report);
// A device as the report's "device" object (backend, name, versions, recipes); the
// devices listing writes the same object.
nlohmann::ordered_json DeviceJson(const core::DeviceInfo& device);

}  // namespace gemmprof::report
