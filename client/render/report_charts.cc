#include "client/render/report_charts.h"

#include <algorithm>

#include "client/render/format.h"
#include "client/render/model_label.h"
#include "client/render/recipe_style.h"
#include "client/render/roofline_chart.h"
#include "core/derive.h"
#include "report/energy.h"
#include "report/figures.h"

namespace gemmprof::client::render {
namespace {

using core::Mode;
using core::Recipe;
using report::Analysis;
using report::GemmRow;
using report::Totals;

std::string Name(const core::RecipeVariant& r) { return r.Name(); }
std::string Name(Mode m) { return std::string(core::ToString(m)); }

std::string Subject(const Analysis& a) {
  const core::JobRecord& job = a.report().job;
  std::string device = job.device.name.empty() ? "unknown device" : job.device.name;
  if (job.device.backend == "host-reference") device += " (host reference, not a GPU)";
  const std::string model = a.is_shape_list() ? "shape list" : ModelShortLine(job, a.num_layers());
  return device + " | " + model + " | job " + std::to_string(job.id);
}

// The layer and TFLOP/s charts show one mode: autocast is the training step, prequant
// isolates the GEMM kernel.
Mode PreferredMode(const Analysis& a, Mode first_choice) {
  for (Mode m : a.modes())
    if (m == first_choice) return m;
  return a.modes().empty() ? first_choice : a.modes().front();
}

void AddRecipeLegend(const std::vector<core::RecipeVariant>& recipes, BarChart& c) {
  for (const core::RecipeVariant& r : recipes) c.legend.push_back({RecipeColor(r), 1.0, Name(r)});
}

// How a chart that puts several modes side by side tells their bars apart: a letter
// (A autocast, P prequant, D dynamic) and a solid bar for the first mode of the job, light
// ones for the others; no letter where the job has one mode.
struct ModeLook {
  std::string label;
  double opacity = 1.0;
};
ModeLook LookOf(const Analysis& a, Mode m) {
  if (a.modes().size() <= 1) return {};
  const std::string label = m == Mode::kAutocast ? "A" : m == Mode::kPrequant ? "P" : "D";
  return {label, m == a.modes().front() ? 1.0 : kSecondaryOpacity};
}
// "A: autocast, P: prequant" for the job's modes.
std::string ModeKey(const Analysis& a) {
  std::string key;
  for (Mode m : a.modes()) key += (key.empty() ? "" : ", ") + LookOf(a, m).label + ": " + Name(m);
  return key;
}
// The legend's "solid: autocast", "light: prequant, dynamic" where the job has several modes.
void AddModeLegend(const Analysis& a, BarChart& c) {
  if (a.modes().size() <= 1) return;
  std::string light;
  for (size_t i = 1; i < a.modes().size(); ++i) light += (i > 1 ? ", " : "") + Name(a.modes()[i]);
  c.legend.push_back({"", 1.0, "solid: " + Name(a.modes().front())});
  c.legend.push_back({"", 1.0, "light: " + light});
}

BarChart LayerChart(const Analysis& a) {
  const Mode mode = PreferredMode(a, Mode::kAutocast);
  BarChart c;
  c.title = "Per-layer GEMM time by recipe";
  c.subtitle = Subject(a) + " | " + Name(mode);
  c.y_label = "per-layer GEMM time (ms)";
  c.x_label = "recipe (label: speedup vs bf16)";
  const std::vector<core::RecipeVariant> done = a.CompleteRecipes(mode);
  bool any_whisker = false, any_marker = false;
  for (const core::RecipeVariant& r : done) {
    const Totals& t = *a.FindTotals({r, mode});
    Bar bar{"",
            {{t.layer_ms[0] + t.layer_ms[1], RecipeColor(r), 1.0},
             {t.layer_ms[2], RecipeColor(r), kSecondaryOpacity}},
            FormatMs(t.LayerMs())};
    if (auto s = a.ModelSpeedup(r, Recipe::kBf16, mode)) bar.annotation = FormatRatio(*s);
    if (t.layer_ci.valid) {
      bar.whisker = std::make_pair(t.layer_ci.low, t.layer_ci.high);
      any_whisker = true;
    }
    if (t.b2b_complete()) {
      bar.marker = t.B2bLayerMs();
      any_marker = true;
    }
    c.groups.push_back({Name(r), {bar}});
  }
  AddRecipeLegend(done, c);
  c.legend.push_back({"", 1.0, "solid: Fprop+Dgrad"});
  c.legend.push_back({"", 1.0, "light: Wgrad"});
  if (any_whisker) c.legend.push_back({"", 1.0, "whisker: 95% interval"});
  if (any_marker) c.legend.push_back({"", 1.0, "dashed tick: back to back"});
  c.empty_message = "no recipe has a complete set of results in " + Name(mode);
  return c;
}

BarChart ModesChart(const Analysis& a) {
  BarChart c;
  c.title = "Autocast vs prequant per recipe";
  c.subtitle = Subject(a);
  c.y_label = "per-layer GEMM time (ms)";
  c.x_label = "recipe (A: autocast, quantization timed; P: prequant, GEMM only)";
  std::vector<core::RecipeVariant> shown;
  for (const core::RecipeVariant& r : a.recipes()) {
    const Totals* ac = a.FindTotals({r, Mode::kAutocast});
    const Totals* pq = a.FindTotals({r, Mode::kPrequant});
    if (!ac || !pq || !ac->complete() || !pq->complete()) continue;
    shown.push_back(r);
    const double over = ac->LayerMs() - pq->LayerMs();
    const std::string pct =
        ac->LayerMs() > 0 ? FormatPercent(100 * over / ac->LayerMs(), /*with_sign=*/true) : "";
    c.groups.push_back({Name(r),
                        {{"A", {{ac->LayerMs(), RecipeColor(r), 1.0}}, pct},
                         {"P", {{pq->LayerMs(), RecipeColor(r), kSecondaryOpacity}}, ""}}});
  }
  AddRecipeLegend(shown, c);
  c.legend.push_back({"", 1.0, "solid: autocast"});
  c.legend.push_back({"", 1.0, "light: prequant"});
  c.legend.push_back({"", 1.0, "label: quantization share"});
  c.empty_message = "needs both modes (submit with --mode both)";
  return c;
}

BarChart TflopsChart(const Analysis& a) {
  const Mode mode = PreferredMode(a, Mode::kPrequant);
  BarChart c;
  c.title = "Per-GEMM throughput by recipe";
  c.subtitle = Subject(a) + " | " + Name(mode);
  c.y_label = "throughput (TFLOP/s)";
  c.x_label = "GEMM (pass op)";
  std::vector<core::RecipeVariant> shown;
  for (const GemmRow& row : a.rows()) {
    BarGroup g{std::string(core::ToString(row.op.pass)) + " " + row.op.name, {}};
    // Per GEMM, the items' own recipes: a variant's GEMM is one of them.
    for (core::Recipe r : a.item_recipes()) {
      if (!row.TimeMs({r, mode})) continue;
      g.bars.push_back({"", {{report::TflopsOf(*row.Item({r, mode})), RecipeColor(r), 1.0}}, ""});
      if (std::find(shown.begin(), shown.end(), r) == shown.end()) shown.push_back(r);
    }
    if (!g.bars.empty()) c.groups.push_back(std::move(g));
  }
  std::sort(shown.begin(), shown.end());
  AddRecipeLegend(shown, c);
  c.empty_message = "no measured GEMM in " + Name(mode);
  return c;
}

// The tokens of the step an inference sweep's item belongs to (its op name's "@m=";
// an expert op's own M is its capacity, not the step's tokens).
int64_t StepTokens(const core::GemmOp& op) { return core::SweepM(op.name).value_or(op.shape.m); }

// An inference sweep (vLLM's figure): TFLOP/s of the model's fprop GEMMs at each M, one
// line per recipe x mode (colour: recipe, dash: mode), p20..p80 whiskers. The figure at
// one M is the flops of those GEMMs (times their layers) over the same sum of their
// median times; the whisker uses the sums of their p80 and p20 times. `experts`: the
// routed experts' GEMMs only (vLLM's MoE benchmark figure), each counted at its experts'
// own tokens.
BarChart SweepTflopsChart(const Analysis& a, bool experts = false) {
  BarChart c;
  c.title = experts ? "Routed experts: throughput against tokens per step"
                    : "Throughput against M (inference sweep)";
  c.subtitle = Subject(a);
  c.y_label = experts ? "expert GEMMs (TFLOP/s)" : "fprop GEMMs of the model (TFLOP/s)";
  c.x_label = "M (tokens per step); whisker: p20..p80";
  std::vector<int64_t> ms;
  for (const core::ItemRecord& r : a.report().items) ms.push_back(StepTokens(r.item.op));
  std::sort(ms.begin(), ms.end());
  ms.erase(std::unique(ms.begin(), ms.end()), ms.end());
  for (int64_t m : ms) c.x_categories.push_back(std::to_string(m));
  struct Sums {
    double flops = 0, median = 0, p20 = 0, p80 = 0;
  };
  const std::vector<std::string> dashes = {"", "6 3", "2 3"};
  for (const core::RecipeVariant& r : a.recipes()) {
    for (size_t mi = 0; mi < a.modes().size(); ++mi) {
      const Mode mode = a.modes()[mi];
      std::vector<Sums> at(ms.size());
      for (const core::ItemRecord& rec : a.report().items) {
        if (rec.item.op.pass != core::Pass::kFprop) continue;
        const core::PassItem p =
            core::ItemFor(r, core::Pass::kFprop, a.report().job.spec.timing.fast_accum);
        if (rec.item.recipe != p.recipe || rec.item.fast_accum != p.fast_accum ||
            rec.item.mode != mode || !rec.result.has_value())
          continue;
        if (experts && rec.item.op.groups <= 1) continue;
        const size_t i =
            std::lower_bound(ms.begin(), ms.end(), StepTokens(rec.item.op)) - ms.begin();
        const core::SampleStats& t = rec.result->time;
        const double layers = std::max<int64_t>(1, rec.item.op.layers);
        at[i].flops += rec.result->flops * layers;
        at[i].median += t.median_ms * layers;
        at[i].p20 += t.p20_ms * layers;
        at[i].p80 += t.p80_ms * layers;
      }
      LineSeries line{RecipeColor(r), dashes[std::min(mi, dashes.size() - 1)], {}, {}};
      bool any = false;
      for (const Sums& s : at) {
        if (s.median <= 0) {
          line.values.push_back(std::nullopt);
          line.ranges.push_back(std::nullopt);
          continue;
        }
        any = true;
        line.values.push_back(s.flops / (s.median * 1e9));
        if (s.p20 > 0 && s.p80 > 0) {
          line.ranges.push_back(std::make_pair(s.flops / (s.p80 * 1e9), s.flops / (s.p20 * 1e9)));
        } else {
          line.ranges.push_back(std::nullopt);  // samples without percentiles
        }
      }
      if (!any) continue;
      c.lines.push_back(std::move(line));
      c.legend.push_back({RecipeColor(r), 1.0,
                          Name(r) + " " + Name(mode) +
                              (mi == 0   ? ""
                               : mi == 1 ? " (dashed)"
                                         : " (dotted)")});
    }
  }
  c.empty_message = "no measured fprop GEMM";
  return c;
}

BarChart SpeedupChart(const Analysis& a) {
  BarChart c;
  c.title = "Full-model speedup vs bf16";
  c.subtitle = Subject(a);
  c.y_label = "speedup vs bf16 (x, > 1 is faster)";
  c.x_label = a.modes().size() > 1 ? "recipe (" + ModeKey(a) + "); dashed line: bf16"
                                   : "recipe; dashed line: bf16";
  c.reference_line = 1.0;
  std::vector<core::RecipeVariant> shown;
  for (const core::RecipeVariant& r : a.recipes()) {
    if (r == Recipe::kBf16) continue;
    BarGroup g{Name(r), {}};
    for (Mode m : a.modes()) {
      const auto s = a.ModelSpeedup(r, Recipe::kBf16, m);
      if (!s) continue;
      const ModeLook look = LookOf(a, m);
      g.bars.push_back({look.label, {{*s, RecipeColor(r), look.opacity}}, FormatRatio(*s)});
    }
    if (g.bars.empty()) continue;
    shown.push_back(r);
    c.groups.push_back(std::move(g));
  }
  AddRecipeLegend(shown, c);
  AddModeLegend(a, c);
  c.empty_message = "needs complete bf16 results and another recipe";
  return c;
}

// Joules per layer by recipe and mode, each with its 95% interval; the label is the
// energy ratio against bf16 in the same mode.
BarChart EnergyChart(const Analysis& a) {
  BarChart c;
  c.title = "Per-layer GEMM energy by recipe";
  c.subtitle = Subject(a);
  c.y_label = "per-layer GEMM energy (J, whole board)";
  c.x_label = a.modes().size() > 1 ? "recipe (" + ModeKey(a) + "; label: energy ratio vs bf16)"
                                   : "recipe (label: energy ratio vs bf16)";
  std::vector<core::RecipeVariant> shown;
  for (const core::RecipeVariant& r : a.recipes()) {
    BarGroup g{Name(r), {}};
    for (Mode m : a.modes()) {
      const auto joules = report::EnergySum(a, {r, m}, report::Scope{});
      if (!joules) continue;
      const ModeLook look = LookOf(a, m);
      Bar bar{look.label, {{joules->center, RecipeColor(r), look.opacity}}, ""};
      if (r != Recipe::kBf16) {
        const core::stats::Interval ratio =
            report::EnergyRatio(a, {Recipe::kBf16, m}, {r, m}, report::Scope{});
        if (ratio.center > 0) bar.annotation = FormatRatio(ratio.center);
      }
      if (joules->valid) bar.whisker = std::make_pair(joules->low, joules->high);
      g.bars.push_back(std::move(bar));
    }
    if (g.bars.empty()) continue;
    shown.push_back(r);
    c.groups.push_back(std::move(g));
  }
  AddRecipeLegend(shown, c);
  AddModeLegend(a, c);
  c.legend.push_back({"", 1.0, "whisker: 95% interval"});
  c.empty_message = "no recipe has an energy figure for every GEMM (submit with --energy)";
  return c;
}

}  // namespace

std::string_view ToString(ChartKind kind) {
  switch (kind) {
    case ChartKind::kLayer:
      return "layer";
    case ChartKind::kModes:
      return "modes";
    case ChartKind::kTflops:
      return "tflops";
    case ChartKind::kSpeedup:
      return "speedup";
    case ChartKind::kRoofline:
      return "roofline";
    case ChartKind::kEnergy:
      return "energy";
    case ChartKind::kAll:
      return "all";
  }
  return "?";
}

std::optional<ChartKind> ParseChartKind(std::string_view s) {
  for (ChartKind k : {ChartKind::kLayer, ChartKind::kModes, ChartKind::kTflops, ChartKind::kSpeedup,
                      ChartKind::kRoofline, ChartKind::kEnergy, ChartKind::kAll})
    if (ToString(k) == s) return k;
  return std::nullopt;
}

std::string ChartKindList() { return "layer, modes, tflops, speedup, roofline, energy, all"; }

BarChart BuildChart(const Analysis& a, ChartKind kind) {
  switch (kind) {
    case ChartKind::kModes:
      return ModesChart(a);
    case ChartKind::kTflops:
      return TflopsChart(a);
    case ChartKind::kSpeedup:
      return SpeedupChart(a);
    case ChartKind::kEnergy:
      return EnergyChart(a);
    case ChartKind::kRoofline:  // not a bar chart: RenderChartSvg draws it
    case ChartKind::kLayer:
    case ChartKind::kAll:
      break;
  }
  return LayerChart(a);
}

absl::StatusOr<std::string> RenderChartSvg(const core::Report& report, ChartKind kind) {
  if (kind == ChartKind::kRoofline) {
    for (const core::ItemRecord& item : report.items) {
      if (item.result.has_value()) return RenderRooflineSvg(report);
    }
    return absl::FailedPreconditionError("job " + std::to_string(report.job.id) + " (" +
                                         std::string(core::ToString(report.job.state)) +
                                         ") has no measured item; nothing to plot yet");
  }
  const Analysis a(report);
  if (kind == ChartKind::kEnergy && !report::HasEnergy(report))
    return absl::FailedPreconditionError("job " + std::to_string(report.job.id) +
                                         " has no energy figures: submit it with --energy");
  bool any = false;
  for (Mode m : a.modes()) any |= !a.CompleteRecipes(m).empty();
  if (!any)
    return absl::FailedPreconditionError(
        "job " + std::to_string(report.job.id) + " (" +
        std::string(core::ToString(report.job.state)) +
        ") has no recipe with a complete set of results; nothing to plot yet");
  if (a.is_sweep() && kind == ChartKind::kTflops) {
    bool grouped = false;
    for (const core::ItemRecord& r : report.items) grouped |= r.item.op.groups > 1;
    if (!grouped) return RenderSvg(SweepTflopsChart(a));
    return RenderSvgStack({SweepTflopsChart(a), SweepTflopsChart(a, true)});
  }
  if (a.is_sweep())
    return absl::FailedPreconditionError(
        "job " + std::to_string(report.job.id) +
        " is an inference sweep; per-layer charts would add different M together: use --kind "
        "tflops");
  if (kind != ChartKind::kAll) return RenderSvg(BuildChart(a, kind));
  return RenderSvgStack({LayerChart(a), ModesChart(a), TflopsChart(a), SpeedupChart(a)});
}

}  // namespace gemmprof::client::render
