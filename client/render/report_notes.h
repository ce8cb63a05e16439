// Notices of a report: everything that makes a number less trustworthy. Pure; deterministic for a
// given report (ages are measured against the job's creation time, not the clock).
#pragma once

#include <string>
#include <vector>

#include "client/render/report_analysis.h"

namespace gemmprof::client::render {

// Relative spread (stdev / median) above which an item's number is flagged.
inline constexpr double kHighSpreadRatio = 0.05;

// The loud line shown whenever the backend is the host reference runner.
inline constexpr char kHostReferenceBanner[] =
    "host reference runner (CPU emulation), not a GPU measurement";

// One line each, most serious first: host-reference backend, job not finished,
// failed items, wrong results, recipes not supported (and why), throttled samples,
// high spread, cached results and their age, measurement notes. Long categories are
// cut after a few lines with "... and N more".
std::vector<std::string> BuildNotices(const ReportAnalysis& analysis);

}  // namespace gemmprof::client::render
