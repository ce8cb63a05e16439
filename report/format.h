// Number, time and label formats of the report's sentences (notices, findings, claims).
// The renderers write their tables with the same ones, so a figure reads the same in a
// sentence and in a cell. Pure; thread-safe.
#pragma once

#include <cstdint>
#include <string>

#include "core/job.h"
#include "core/stats.h"

namespace gemmprof::report {

// Fixed decimals, no trailing garbage: FormatFixed(1.5, 2) == "1.50".
std::string FormatFixed(double value, int decimals);
// Milliseconds with 4 significant-ish digits: "12.35", "1.235", "0.1235".
std::string FormatMs(double ms);
// A speedup or time ratio: "1.52x".
std::string FormatRatio(double ratio);
// A percentage with one decimal and a sign when asked: "12.3%", "+12.3%".
std::string FormatPercent(double percent, bool with_sign = false);
// A count with thousands separators: "1,842".
std::string FormatCount(int64_t count);
// Unix epoch milliseconds as "2026-11-20 10:00:00 UTC"; 0 gives "-".
std::string FormatUtc(int64_t unix_ms);
// Unix epoch milliseconds as ISO 8601 "2026-11-20T10:00:00Z", for CSV and JSON; 0 gives "".
std::string FormatIsoUtc(int64_t unix_ms);
// Joules in the unit that keeps them readable, three decimals: "1.234 J", "15.210 mJ",
// "850.000 uJ".
std::string FormatJoules(double joules);
// A duration in milliseconds as "3d 4h", "2h 5m", "4m 10s", "12s".
std::string FormatDuration(int64_t duration_ms);

// "1.86x [1.84-1.88]" (en dash) with a valid interval, "1.86x" without.
std::string FormatRatioCi(const core::stats::Interval& ratio);
// "1.62 ms [1.58-1.66]" with a valid interval, "1.62 ms" without.
std::string FormatMsCi(const core::stats::Interval& ms);
// "±0.4%" of a relative half-width (0.004).
std::string FormatPlusMinus(double rel_half_width);

// "fprop qkv 4096x4096x12288" (+ " x8 groups" for grouped ops).
std::string OpLabel(const core::GemmOp& op);
// The item's recipe, with its own fast accumulation where it has one (a variant's):
// "fp8-current", "fp8-current (fast accumulation on)".
std::string RecipeLabel(const core::WorkItem& item);
// "fprop qkv 4096x4096x12288 fp8-current/autocast".
std::string ItemLabel(const core::ItemRecord& item);

}  // namespace gemmprof::report
