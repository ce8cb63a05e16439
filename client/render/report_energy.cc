#include "client/render/report_energy.h"

#include <algorithm>

#include "client/render/format.h"
#include "client/render/text_table.h"
#include "report/energy.h"

namespace gemmprof::client::render {
namespace {

using report::RecipeMode;

std::string Name(const core::RecipeVariant& r) { return r.Name(); }
std::string Name(core::Mode m) { return std::string(core::ToString(m)); }

// One row per item that asked for energy (items sharing another's measurement are left
// out: they are the same window).
Block ItemTable(const core::Report& report) {
  std::vector<const core::ItemRecord*> rows;
  for (const core::ItemRecord& item : report.items) {
    const core::Measurement* m = item.result ? &*item.result : nullptr;
    if (m && m->shared_with_item == 0 && (m->energy.present() || !m->energy.not_measured.empty()))
      rows.push_back(&item);
  }
  std::stable_sort(rows.begin(), rows.end(),
                   [](auto* a, auto* b) { return a->item.seq < b->item.seq; });
  TextTable t({"pass", "op", "MxKxN", "recipe", "mode", "energy per GEMM", "95% interval",
               "power W", "TFLOP/J", "window s", "updates"},
              {Align::kLeft, Align::kLeft, Align::kLeft, Align::kLeft, Align::kLeft, Align::kRight,
               Align::kRight, Align::kRight, Align::kRight, Align::kRight, Align::kRight});
  for (const core::ItemRecord* r : rows) {
    const core::Measurement& m = *r->result;
    const core::Energy& e = m.energy;
    const core::GemmOp& op = r->item.op;
    std::vector<std::string> cells = {std::string(core::ToString(op.pass)), op.name,
                                      op.shape.ToString(), report::RecipeLabel(r->item),
                                      Name(r->item.mode)};
    if (!e.present()) {
      cells.push_back("not measured: " + e.not_measured);
      cells.insert(cells.end(), 5, "");
    } else {
      cells.push_back(FormatJoules(e.joules));
      cells.push_back(e.joules_high > e.joules_low
                          ? FormatJoules(e.joules_low) + " - " + FormatJoules(e.joules_high)
                          : "-");
      cells.push_back(FormatFixed(e.power_w, 0));
      cells.push_back(m.flops > 0 ? FormatFixed(m.flops / e.joules / 1e12, 2) : "-");
      cells.push_back(FormatFixed(e.window_s, 2));
      cells.push_back(std::to_string(e.counter_updates));
    }
    t.AddRow(std::move(cells));
  }
  return Table(std::move(t), "Energy per GEMM (one iteration of the timed region), per item");
}

// Per layer and full model per recipe, with the energy and time ratios against bf16.
std::optional<Block> LayerTable(const report::Analysis& a, core::Mode mode) {
  const RecipeMode bf16{core::Recipe::kBf16, mode};
  TextTable t({"recipe", "per-layer J", "full model J", "energy vs bf16", "time vs bf16"});
  bool any = false;
  for (const core::RecipeVariant& r : a.CompleteRecipes(mode)) {
    const RecipeMode key{r, mode};
    report::Scope layer;
    report::Scope model;
    model.full_model = true;
    const auto per_layer = report::EnergySum(a, key, layer);
    const auto full = report::EnergySum(a, key, model);
    if (!per_layer || !full) continue;
    any = true;
    std::string energy_ratio = "-", time_ratio = "-";
    if (r != core::Recipe::kBf16) {
      if (const auto e = report::EnergyRatio(a, bf16, key, layer); e.center > 0)
        energy_ratio = FormatRatioCi(e);
      if (const auto tr = a.TotalRatio(bf16, key, layer); tr.center > 0)
        time_ratio = FormatRatioCi(tr);
    }
    t.AddRow({Name(r),
              FormatJoules(per_layer->center) +
                  (per_layer->valid ? " " + FormatPlusMinus(per_layer->RelHalfWidth()) : ""),
              FormatJoules(full->center), energy_ratio, time_ratio});
  }
  if (!any) return std::nullopt;
  return Table(std::move(t),
               "Energy per layer and full model, " + Name(mode) +
                   " (vs bf16: bf16 joules / recipe joules and bf16 time / recipe time, per "
                   "layer; > 1 uses less)");
}

// What each recipe's quantization costs per layer, in joules beside its time: autocast
// minus prequant of the same GEMMs, where both modes have energy figures.
std::optional<Block> QuantizationTable(const report::Analysis& a) {
  TextTable t({"recipe", "quantization per layer", "share of autocast energy",
               "quantization time per layer"});
  const report::Scope layer;
  bool any = false;
  for (const core::RecipeVariant& r : a.CompleteRecipes(core::Mode::kAutocast)) {
    if (r == core::Recipe::kBf16) continue;
    const core::stats::Interval q = report::QuantizationEnergy(a, r, layer);
    const auto total = report::EnergySum(a, {r, core::Mode::kAutocast}, layer);
    if (q.center == 0 || !total || total->center <= 0) continue;
    any = true;
    const core::stats::Interval time =
        a.TotalDifference({r, core::Mode::kAutocast}, {r, core::Mode::kPrequant}, layer);
    t.AddRow({Name(r),
              FormatJoules(q.center) + (q.valid ? " " + FormatPlusMinus(q.RelHalfWidth()) : ""),
              FormatPercent(100 * q.center / total->center), FormatMsCi(time)});
  }
  if (!any) return std::nullopt;
  return Table(std::move(t),
               "Quantization energy per layer: autocast joules - prequant joules of the same "
               "GEMMs (independent windows; 95% interval)");
}

// Full-model forward joules per M of a sweep.
std::optional<Block> SweepTable(const report::Analysis& a, core::Mode mode) {
  std::vector<std::string> headers = {"M (tokens)"};
  for (const core::RecipeVariant& r : a.recipes()) headers.push_back(Name(r) + " J");
  TextTable t(headers);
  bool any = false;
  for (int64_t m : a.sweep_ms()) {
    std::vector<std::string> cells = {std::to_string(m)};
    for (const core::RecipeVariant& r : a.recipes()) {
      const auto j = report::SweepModelJoules(a, m, {r, mode});
      any |= j.has_value();
      cells.push_back(j ? FormatJoules(*j) : "-");
    }
    t.AddRow(std::move(cells));
  }
  if (!any) return std::nullopt;
  return Table(std::move(t),
               "Energy per forward step (sum of joules x layers at each M), " + Name(mode));
}

}  // namespace

std::optional<Section> EnergySection(const report::Analysis& a) {
  if (!report::HasEnergy(a.report())) return std::nullopt;
  Section s{"Energy", {ItemTable(a.report())}};
  for (core::Mode mode : a.modes()) {
    if (a.is_sweep()) {
      if (auto b = SweepTable(a, mode)) s.blocks.push_back(std::move(*b));
    } else if (auto b = LayerTable(a, mode)) {
      s.blocks.push_back(std::move(*b));
    }
  }
  if (!a.is_sweep())
    if (auto b = QuantizationTable(a)) s.blocks.push_back(std::move(*b));
  double idle = 0;
  for (const core::ItemRecord& item : a.report().items)
    if (item.result && item.result->energy.idle_power_w > 0)
      idle = item.result->energy.idle_power_w;
  std::string note =
      "Board energy from the GPU's energy counter (NVML), read on its update edges over a window "
      "of at least 1 s and 10 updates in which the item's back-to-back graph ran without pause; "
      "joules per GEMM = the counter's joules between its first and last edge / the GEMMs "
      "completed between them. The interval comes from the window's counter periods. "
      "Whole-board energy: idle power is included";
  if (idle > 0) note += " (idle " + FormatFixed(idle, 0) + " W before the job, not subtracted)";
  s.blocks.push_back(Note(note + "."));
  return s;
}

}  // namespace gemmprof::client::render
