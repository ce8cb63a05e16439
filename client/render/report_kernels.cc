#include "client/render/report_kernels.h"

#include <algorithm>

#include "client/render/format.h"
#include "client/render/text_table.h"

namespace gemmprof::client::render {

std::optional<Section> KernelTimingSection(const core::Report& report) {
  std::vector<const core::ItemRecord*> rows;
  for (const core::ItemRecord& item : report.items) {
    if (item.result && item.result->kernel_samples > 0 && item.result->shared_with_item == 0)
      rows.push_back(&item);
  }
  if (rows.empty()) return std::nullopt;
  std::stable_sort(rows.begin(), rows.end(),
                   [](auto* a, auto* b) { return a->item.seq < b->item.seq; });
  TextTable t({"pass", "op", "MxKxN", "recipe", "mode", "events ms", "kernel ms", "kernel/events",
               "quant kernels ms", "launches", "kernels (one launch, GEMM first)"},
              {Align::kLeft, Align::kLeft, Align::kLeft, Align::kLeft, Align::kLeft, Align::kRight,
               Align::kRight, Align::kRight, Align::kRight, Align::kRight, Align::kLeft});
  for (const core::ItemRecord* r : rows) {
    const core::Measurement& m = *r->result;
    const core::GemmOp& op = r->item.op;
    const double events = m.time.median_ms;
    t.AddRow({std::string(core::ToString(op.pass)), op.name, op.shape.ToString(),
              report::RecipeLabel(r->item), std::string(core::ToString(r->item.mode)),
              FormatMs(events), FormatMs(m.kernel.median_ms),
              events > 0 ? FormatFixed(m.kernel.median_ms / events, 3) : "-",
              m.kernel_quant_ms > 0 ? FormatMs(m.kernel_quant_ms) : "-",
              std::to_string(m.kernel_samples), m.kernel_names});
  }
  Section s{"Kernel-only timing (CUPTI)", {}};
  s.blocks.push_back(Table(std::move(t), "Median ms per launch of one iteration"));
  s.blocks.push_back(
      Note("events ms: CUDA events around one graph launch, median of the rounds' samples. "
           "kernel ms: for the same launches, the time the device ran the kernels each ran "
           "(overlaps counted once), from CUPTI's device timestamps, so launch and graph gaps "
           "never count. "
           "1 - kernel/events is the gap share; the report's other figures are events."));
  return s;
}

}  // namespace gemmprof::client::render
