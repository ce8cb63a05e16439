#include "client/render/report_findings.h"

#include <cmath>

#include "client/render/format.h"

namespace gemmprof::client::render {
namespace {

constexpr size_t kMaxSlowGemmLines = 12;

std::string Name(core::Recipe r) { return std::string(core::ToString(r)); }
std::string Name(core::Mode m) { return std::string(core::ToString(m)); }

void WinnerFindings(const ReportAnalysis& a, std::vector<std::string>& out) {
  for (core::Mode mode : a.modes()) {
    const std::vector<core::Recipe> done = a.CompleteRecipes(mode);
    // A winner needs a race: with one complete recipe there is nothing to compare.
    if (done.size() < 2) continue;
    core::Recipe best = done.front();
    for (core::Recipe r : done)
      if (a.FindTotals({r, mode})->LayerMs() < a.FindTotals({best, mode})->LayerMs()) best = r;
    std::string line = Name(mode) + ": " + Name(best) + " is the fastest per layer (" +
                       FormatMs(a.FindTotals({best, mode})->LayerMs()) + " ms";
    if (const auto s = a.ModelSpeedup(best, core::Recipe::kBf16, mode);
        s && best != core::Recipe::kBf16)
      line += ", " + FormatRatio(*s) + " vs bf16 on the full model";
    out.push_back(line + ").");
  }
}

void OverheadFindings(const ReportAnalysis& a, std::vector<std::string>& out) {
  for (core::Recipe r : a.recipes()) {
    if (r == core::Recipe::kBf16) continue;
    const Totals* ac = a.FindTotals({r, core::Mode::kAutocast});
    const Totals* pq = a.FindTotals({r, core::Mode::kPrequant});
    if (!ac || !pq || !ac->complete() || !pq->complete() || ac->LayerMs() <= 0) continue;
    const double overhead = ac->LayerMs() - pq->LayerMs();
    out.push_back(Name(r) + ": quantization costs " + FormatMs(overhead) + " ms per layer, " +
                  FormatPercent(100.0 * overhead / ac->LayerMs()) +
                  " of its autocast time (autocast " + FormatMs(ac->LayerMs()) +
                  " ms vs prequant " + FormatMs(pq->LayerMs()) + " ms).");
  }
}

void AsymmetryFindings(const ReportAnalysis& a, std::vector<std::string>& out) {
  for (core::Mode mode : a.modes()) {
    std::string list;
    for (core::Recipe r : a.recipes()) {
      const Totals* t = a.FindTotals({r, mode});
      if (!t || !t->complete()) continue;
      const double f = t->layer_ms[PassIndex(core::Pass::kFprop)];
      const double d = t->layer_ms[PassIndex(core::Pass::kDgrad)];
      if (f <= 0 || d <= 0 || std::fabs(d - f) / f <= kPassAsymmetryRatio) continue;
      list += (list.empty() ? "" : ", ") + Name(r) + " " +
              FormatPercent(100.0 * (d - f) / f, /*with_sign=*/true) + " (" + FormatMs(d) + " vs " +
              FormatMs(f) + " ms)";
    }
    if (!list.empty())
      out.push_back(Name(mode) + ": Dgrad differs from Fprop by more than " +
                    FormatPercent(100 * kPassAsymmetryRatio) + " per layer: " + list + ".");
  }
}

void SlowGemmFindings(const ReportAnalysis& a, std::vector<std::string>& out) {
  std::vector<std::string> lines;
  for (core::Mode mode : a.modes()) {
    for (const GemmRow& row : a.rows()) {
      const std::optional<double> base = row.MedianMs({core::Recipe::kBf16, mode});
      if (!base) continue;
      for (core::Recipe r : a.recipes()) {
        if (r == core::Recipe::kBf16) continue;
        const std::optional<double> ms = row.MedianMs({r, mode});
        if (!ms || *ms < *base) continue;
        const std::string why = mode == core::Mode::kAutocast
                                    ? "quantization overhead exceeds the GEMM gain"
                                    : "the low-precision GEMM itself is not faster";
        lines.push_back(Name(mode) + ": " + Name(r) + " is not faster than bf16 on " +
                        OpLabel(row.op) + " (" + FormatMs(*ms) + " ms vs " + FormatMs(*base) +
                        " ms): " + why + ".");
      }
    }
  }
  for (size_t i = 0; i < lines.size() && i < kMaxSlowGemmLines; ++i) out.push_back(lines[i]);
  if (lines.size() > kMaxSlowGemmLines)
    out.push_back("... and " + std::to_string(lines.size() - kMaxSlowGemmLines) +
                  " more GEMMs where a low-precision recipe is not faster than bf16.");
}

}  // namespace

std::vector<std::string> BuildFindings(const ReportAnalysis& analysis) {
  std::vector<std::string> out;
  // Totals of a sweep add different M together; only per-GEMM findings hold there.
  if (!analysis.is_sweep()) {
    WinnerFindings(analysis, out);
    OverheadFindings(analysis, out);
    AsymmetryFindings(analysis, out);
  }
  SlowGemmFindings(analysis, out);
  return out;
}

}  // namespace gemmprof::client::render
