// Notices of a report: everything that makes a number less trustworthy. Pure; deterministic for a
// given report (ages are measured against the job's creation time, not the clock).
#pragma once

#include <string>
#include <vector>

#include "report/analysis.h"

namespace gemmprof::report {

// Relative spread (stdev / median or (p80 - p20) / median) above which an item is flagged.
inline constexpr double kHighSpreadRatio = 0.05;

// The loud line shown whenever the backend is the host reference runner.
inline constexpr char kHostReferenceBanner[] =
    "host reference runner (CPU emulation), not a GPU measurement";

// One line each, most serious first: host-reference backend, job not finished,
// failed items, wrong results, recipes not supported (and why), throttling (one line per
// distinct set of NVML clocks-event reasons, items named only when a minority), high
// spread (count and the worst few), cached results and their age, measurement notes
// (without the runner's throttle note, which the throttle line already says). Long
// categories are cut after a few lines or names with "... and N more".
std::vector<std::string> BuildNotices(const Analysis& analysis);

}  // namespace gemmprof::report
