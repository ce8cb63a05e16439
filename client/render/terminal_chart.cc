#include "client/render/terminal_chart.h"

#include <algorithm>
#include <cmath>

#include "client/render/format.h"

namespace gemmprof::client::render {

std::vector<std::string> RenderTerminalChart(const report::Analysis& a) {
  double max_ms = 0;
  size_t label_width = 0;
  for (core::Mode mode : a.modes())
    for (const core::RecipeVariant& r : a.CompleteRecipes(mode)) {
      max_ms = std::max(max_ms, a.FindTotals({r, mode})->LayerMs());
      label_width =
          std::max(label_width, core::ToString(r).size() + 1 + core::ToString(mode).size());
    }
  if (max_ms <= 0) return {"(no recipe has a complete set of results yet)"};
  std::vector<std::string> out;
  for (core::Mode mode : a.modes()) {
    for (const core::RecipeVariant& r : a.CompleteRecipes(mode)) {
      const report::Totals& t = *a.FindTotals({r, mode});
      const auto& l = t.layer_ms;
      const int fd = static_cast<int>(std::lround(kTerminalBarWidth * (l[0] + l[1]) / max_ms));
      const int total = static_cast<int>(std::lround(kTerminalBarWidth * t.LayerMs() / max_ms));
      std::string label = std::string(core::ToString(r)) + "/" + std::string(core::ToString(mode));
      label.resize(label_width, ' ');
      std::string bar = std::string(static_cast<size_t>(fd), '#') +
                        std::string(static_cast<size_t>(std::max(0, total - fd)), '=');
      bar.resize(kTerminalBarWidth, ' ');
      std::string line = label + " |" + bar + "| " + FormatMs(t.LayerMs()) + " ms";
      if (t.layer_ci.valid) line += " " + FormatPlusMinus(t.layer_ci.RelHalfWidth());
      if (t.b2b_complete()) line += ", b2b " + FormatMs(t.B2bLayerMs()) + " ms";
      if (const auto s = a.ModelSpeedup(r, core::Recipe::kBf16, mode);
          s && r != core::Recipe::kBf16)
        line += "  " + FormatRatioCi(a.ModelSpeedupCi(r, core::Recipe::kBf16, mode)) + " vs bf16";
      out.push_back(line);
    }
  }
  out.push_back("# Fprop+Dgrad   = Wgrad   (per-layer ms, one scale for all bars)");
  return out;
}

}  // namespace gemmprof::client::render
