// The report's "Energy" section (`submit --energy`): per item the joules per GEMM with
// their interval, mean power, TFLOP/J and window, or why energy was not measured; per
// layer and full model per recipe, with energy and time ratios against bf16 side by side.
// Pure.
#pragma once

#include <optional>

#include "client/render/document.h"
#include "report/analysis.h"

namespace gemmprof::client::render {

// nullopt when no item asked for energy.
std::optional<Section> EnergySection(const report::Analysis& analysis);

}  // namespace gemmprof::client::render
