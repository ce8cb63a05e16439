// Number, time and label formatting shared by every renderer: the report's own formats
// (report/format.h, the ones its sentences use) and the few only tables and listings
// need. Pure; thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "core/job.h"
#include "report/format.h"

namespace gemmprof::client::render {

using report::FormatCount;
using report::FormatDuration;
using report::FormatFixed;
using report::FormatIsoUtc;
using report::FormatJoules;
using report::FormatMs;
using report::FormatMsCi;
using report::FormatPercent;
using report::FormatPlusMinus;
using report::FormatRatio;
using report::FormatRatioCi;
using report::FormatUtc;
using report::ItemLabel;
using report::OpLabel;

// TFLOP/s with one decimal: "812.4".
std::string FormatTflops(double tflops);
// Bytes as GiB with one decimal: "80.0 GiB".
std::string FormatGib(int64_t bytes);
// "Fprop", "Dgrad", "Wgrad".
std::string_view PassTitle(core::Pass pass);

}  // namespace gemmprof::client::render
