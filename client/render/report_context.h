// The context header of a report: device, backend, versions, clocks and power seen,
// timing method and options, job state. Pure.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "client/render/report_analysis.h"

namespace gemmprof::client::render {

// Labelled lines in display order.
std::vector<std::pair<std::string, std::string>> ContextFields(const ReportAnalysis& analysis);

}  // namespace gemmprof::client::render
