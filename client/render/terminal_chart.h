// `gemmprof report --chart`: a compact bar chart of per-layer time for the terminal.
#pragma once

#include <string>
#include <vector>

#include "report/analysis.h"

namespace gemmprof::client::render {

// Bar width, in characters, of the slowest recipe.
inline constexpr int kTerminalBarWidth = 48;

// One line per recipe and mode with complete totals: name, a bar of '#' for
// Fprop+Dgrad followed by '=' for Wgrad (all bars on one scale), the per-layer ms and
// the speedup vs bf16. Plain ASCII, so it survives any terminal and log file.
std::vector<std::string> RenderTerminalChart(const report::Analysis& analysis);

}  // namespace gemmprof::client::render
