// The report's "Kernel-only timing" section (`--timing kernels`): per item, the events
// figure beside the kernels' own durations from CUPTI. Pure.
#pragma once

#include <optional>

#include "client/render/document.h"
#include "core/job.h"

namespace gemmprof::client::render {

// One row per measured item with kernel figures (items sharing another's measurement are
// left out); nullopt when no item has them.
std::optional<Section> KernelTimingSection(const core::Report& report);

}  // namespace gemmprof::client::render
