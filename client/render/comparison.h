// `gemmprof compare A B`, the listing: report/comparison.h's analysis of two jobs as a
// table (context differences, running conditions, per item, per layer, unmatched items,
// summary) and in the machine forms. Pure.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "client/render/listings.h"
#include "report/comparison.h"

namespace gemmprof::client::render {

// One line for the items only in `side` ("A" or "B"): their count and counts per
// recipe/mode (at most 5 groups named), and the items themselves when there are at most 5.
std::string UnmatchedLine(const std::string& side, const std::vector<report::UnmatchedItem>& items);
// `compare --format`: the table form has the context differences, running conditions
// (when both jobs carry telemetry), per-item table (op, pass, MxKxN, recipe, mode, A ms,
// B ms, B/A, threshold, verdict), per-layer table, unmatched items and a one-line
// summary; CSV/JSON rows are the matched items with raw times and interval bounds; JSON
// adds the counts, per-layer ratios, unmatched items and context differences.
Listing ComparisonListing(const report::Comparison& c, int64_t job_a, int64_t job_b);

}  // namespace gemmprof::client::render
