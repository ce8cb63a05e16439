// `gemmprof plot --kind roofline`: every done item of a job on a log-log roofline:
// arithmetic intensity (FLOP per byte moved) against achieved TFLOP/s, one colour per
// recipe (hollow marks: prequant, GEMM only), the dense compute ceiling of each recipe
// type at the job's median measured SM clock, and the memory slope of the copy bandwidth
// measured at job start. Host-reference jobs get their marks without ceilings, and a
// caption that says why.
#pragma once

#include <string>

#include "core/job.h"

namespace gemmprof::client::render {

std::string RenderRooflineSvg(const core::Report& report);

}  // namespace gemmprof::client::render
