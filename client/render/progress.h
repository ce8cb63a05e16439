// What `watch` and `submit --wait` print per event: a redrawn progress bar on a
// terminal, one plain line per event when piped. Pure.
#pragma once

#include <string>

#include "core/job_event.h"

namespace gemmprof::client::render {

// Width of the bar's '#'/'.' part.
inline constexpr int kProgressBarWidth = 30;

// "\r[#####.........] 12/48 items, 1 failed  fprop qkv 4096x4096x12288 bf16/autocast"
// padded to overwrite the previous line; ends in '\n' on JOB_FINISHED.
std::string ProgressBarLine(const core::JobEvent& event);
// "job 7 running: 12/48 items, 1 failed; done fprop qkv ... bf16/autocast 1.234 ms\n".
std::string ProgressEventLine(const core::JobEvent& event);

}  // namespace gemmprof::client::render
