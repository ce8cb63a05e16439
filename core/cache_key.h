// The result-cache key (DESIGN.md, "Storage"): an item measured before on the same
// device model, sm, driver and cuBLASLt version, with the same shape, pass, recipe,
// mode and timing options, is answered from the store.
#pragma once

#include <string>

#include "core/job.h"
#include "core/result.h"

namespace gemmprof::core {

// Deterministic text key; equal keys mean interchangeable measurements.
std::string CacheKey(const DeviceInfo& device, const WorkItem& item, const TimingOptions& timing);

}  // namespace gemmprof::core
