// The context header of a report: device, backend, versions, clocks and power seen,
// timing method and options, job state. Pure.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "report/analysis.h"

namespace gemmprof::client::render {

// Labelled lines in display order.
std::vector<std::pair<std::string, std::string>> ContextFields(const report::Analysis& analysis);

// "5", or "2-5" where the back-to-back count differs between items (it is sized per GEMM
// shape, a launch of about 2 ms); empty when no item has a back-to-back figure.
std::string B2bCountText(const core::Report& report);

}  // namespace gemmprof::client::render
