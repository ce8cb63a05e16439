#include "client/render/report_document.h"

#include <algorithm>

#include "client/render/format.h"
#include "client/render/report_context.h"
#include "client/render/report_energy.h"
#include "client/render/report_experts.h"
#include "client/render/report_kernels.h"
#include "client/render/terminal_chart.h"
#include "report/figures.h"
#include "report/findings.h"
#include "report/notices.h"

namespace gemmprof::client::render {
namespace {

using core::Mode;
using core::Recipe;
using report::Analysis;
using report::Figure;
using report::GemmRow;
using report::RecipeMode;
using report::Scope;
using report::Totals;

std::string Name(const core::RecipeVariant& r) { return r.Name(); }
std::string Name(Mode m) { return std::string(core::ToString(m)); }

// What a per-GEMM cell shows for an item without a usable time.
std::string StatusCell(const core::ItemRecord& item) {
  switch (item.status) {
    case core::ItemStatus::kNotSupported:
      return "n/s";
    case core::ItemStatus::kFailed:
      return "failed";
    case core::ItemStatus::kCancelled:
      return "cancelled";
    case core::ItemStatus::kQueued:
    case core::ItemStatus::kRunning:
      return "pending";
    case core::ItemStatus::kDone:
      break;
  }
  return "?";
}

// Whether variant `v` runs items of its own in `pass` (its fast accumulation differs from
// what the job's --fast-accum gives the pass).
bool OwnItemsIn(const Analysis& a, const core::RecipeVariant& v, core::Pass pass) {
  return v.sets_fast_accum() &&
         core::ItemFor(v, pass, a.report().job.spec.timing.fast_accum).fast_accum !=
             core::FastAccum::kDefault;
}

// The items' recipes with an item of `pass` in `mode` that is not "not supported";
// columns of n/s only would repeat what the notices say, at twice the table width. A
// variant has a column only where it runs items of its own (OwnItemsIn); elsewhere its
// GEMMs are these recipes' items (the caption says which).
std::vector<core::RecipeVariant> ShownRecipes(const Analysis& a, Mode mode, core::Pass pass) {
  std::vector<core::RecipeVariant> out;
  for (core::Recipe r : a.item_recipes()) {
    bool any = false;
    for (const GemmRow& row : a.rows()) {
      if (row.op.pass != pass) continue;
      const core::ItemRecord* item = row.Item({r, mode});
      any |= item != nullptr && item->status != core::ItemStatus::kNotSupported;
    }
    if (any) out.push_back(r);
  }
  // A variant whose accumulation in this pass differs from the job's has items of its own.
  for (const core::RecipeVariant& v : a.recipes())
    if (OwnItemsIn(a, v, pass)) out.push_back(v);
  return out;
}

// Marks of a time cell, for the caption.
struct Marks {
  bool flagged = false;  // * or !
  bool shared = false;   // =
};

std::string Cell(const core::ItemRecord& item, Marks& marks) {
  if (item.status != core::ItemStatus::kDone || !item.result) return StatusCell(item);
  const core::Measurement& m = *item.result;
  std::string ms = FormatMs(report::HeadlineMs(m));
  if (m.verification == core::Verification::kIncorrect) ms += "!";
  if (item.cached) ms += "*";
  marks.flagged |= ms.back() == '!' || ms.back() == '*';
  if (m.shared_with_item > 0) {
    ms += "=";
    marks.shared = true;
  }
  if (m.isolated.present() && m.isolated.rounds >= 2)
    ms += " " + FormatPlusMinus(m.isolated.RelHalfWidth());
  return ms;
}

// True when some done item of `recipe` in `mode` (and `pass`, unless nullopt) has a
// back-to-back estimate.
bool HasB2b(const Analysis& a, const core::RecipeVariant& recipe, Mode mode,
            std::optional<core::Pass> pass) {
  for (const GemmRow& row : a.rows())
    if ((!pass || row.op.pass == *pass) && row.TimeMs({recipe, mode}, Figure::kB2b)) return true;
  return false;
}

bool AnyRounds(const Analysis& a) {
  return a.OldItems() <
         static_cast<int>(std::count_if(
             a.report().items.begin(), a.report().items.end(),
             [](const auto& i) { return i.status == core::ItemStatus::kDone && i.result; }));
}

// "Fprop GEMMs, autocast (ms: one GEMM per launch, ...)": the table's title, saying what
// its times are.
std::string GemmTableTitle(const Analysis& a, core::Pass pass, Mode mode) {
  std::string what = " (median ms per call, TFLOP/s)";
  if (AnyRounds(a)) {
    what = " (ms: one GEMM per launch, mean of interleaved rounds \u00b1 95% interval; TFLOP/s";
    if (const std::string n = B2bCountText(a.report()); !n.empty())
      what += "; b2b ms: back to back, " + n + " per graph";
    what += ")";
  }
  return std::string(PassTitle(pass)) + " GEMMs, " + Name(mode) + what;
}

// TFLOP/s of a timed item, with its share of the dense peak where known (`any_peak` is set
// then); "" without a time.
std::string TflopsCell(const GemmRow& row, RecipeMode key, const core::DeviceInfo& device,
                       bool& any_peak) {
  if (!row.TimeMs(key)) return "";
  const core::ItemRecord& item = *row.Item(key);
  std::string tflops = FormatTflops(report::TflopsOf(item));
  if (const auto of_peak = report::EfficiencyOf(item, device).of_peak) {
    tflops += " (" + FormatPercent(100 * *of_peak) + ")";
    any_peak = true;
  }
  return tflops;
}

// The back-to-back time with its interval, "-" where not measured.
std::string B2bCell(const GemmRow& row, RecipeMode key) {
  const auto ms = row.TimeMs(key, Figure::kB2b);
  if (!ms) return "-";
  const core::Estimate e = row.EstimateOf(key, Figure::kB2b);
  return FormatMs(*ms) + (e.rounds >= 2 ? " " + FormatPlusMinus(e.RelHalfWidth()) : "");
}

Block GemmTable(const Analysis& a, core::Pass pass, Mode mode) {
  bool grouped = false, named = false;
  for (const GemmRow& row : a.rows()) {
    grouped |= row.op.groups > 1;
    named |= row.op.name != row.op.shape.ToString();
  }
  std::vector<std::string> headers;
  if (named) headers.push_back("op");
  headers.push_back("MxKxN");
  if (grouped) headers.push_back("groups");
  const std::vector<core::RecipeVariant> recipes = ShownRecipes(a, mode, pass);
  std::vector<bool> b2b;
  for (const core::RecipeVariant& r : recipes) {
    headers.push_back(Name(r) + " ms");
    headers.push_back(Name(r) + " TFLOP/s");
    b2b.push_back(HasB2b(a, r, mode, pass));
    if (b2b.back()) headers.push_back(Name(r) + " b2b ms");
  }
  std::vector<Align> align(headers.size(), Align::kRight);
  align[0] = Align::kLeft;
  if (named) align[1] = Align::kLeft;
  TextTable table(headers, align);
  Marks marks;
  bool any_peak = false;
  for (const GemmRow& row : a.rows()) {
    if (row.op.pass != pass) continue;
    std::vector<std::string> cells;
    if (named) cells.push_back(row.op.name);
    cells.push_back(row.op.shape.ToString());
    if (grouped) cells.push_back(std::to_string(row.op.groups));
    for (size_t i = 0; i < recipes.size(); ++i) {
      const RecipeMode key{recipes[i], mode};
      const core::ItemRecord* item = row.Item(key);
      if (item == nullptr) {
        cells.insert(cells.end(), {"", ""});
        if (b2b[i]) cells.push_back("");
        continue;
      }
      cells.push_back(Cell(*item, marks));
      cells.push_back(TflopsCell(row, key, a.report().job.device, any_peak));
      if (b2b[i]) cells.push_back(B2bCell(row, key));
    }
    table.AddRow(std::move(cells));
  }
  Block b = Table(std::move(table), GemmTableTitle(a, pass, mode));
  if (any_peak) {
    b.caption +=
        "; TFLOP/s (%): of the dense peak at the SM clock measured during the item (SMs x "
        "clock x dense FLOP/clk/SM)";
  }
  if (marks.flagged) b.caption += "; * cached result, ! failed verification";
  if (marks.shared) b.caption += "; = same GPU work as another recipe or mode, one measurement";
  std::string hidden;
  for (core::Recipe r : a.item_recipes()) {
    if (std::find(recipes.begin(), recipes.end(), core::RecipeVariant(r)) != recipes.end())
      continue;
    const bool has_items = std::any_of(a.rows().begin(), a.rows().end(), [&](const GemmRow& row) {
      return row.op.pass == pass && row.Item({r, mode}) != nullptr;
    });
    if (has_items) hidden += (hidden.empty() ? "" : ", ") + Name(r);
  }
  if (!hidden.empty()) b.caption += "; not supported here: " + hidden;
  for (const core::RecipeVariant& v : a.recipes())
    if (v.composite() && !OwnItemsIn(a, v, pass))
      b.caption += "; " + Name(v) + " runs the " + Name(v.For(pass)) + " column here";
  return b;
}

std::string MsOrDash(const Totals& t, double ms) { return t.complete() ? FormatMs(ms) : "-"; }

bool HasPass(const Analysis& a, core::Pass p) {
  for (core::Pass q : a.passes())
    if (q == p) return true;
  return false;
}

Block LayerTable(const Analysis& a, Mode mode) {
  const bool fprop = HasPass(a, core::Pass::kFprop), dgrad = HasPass(a, core::Pass::kDgrad),
             wgrad = HasPass(a, core::Pass::kWgrad);
  std::vector<std::string> headers = {"recipe"};
  if (fprop) headers.push_back("Fprop ms");
  if (dgrad) headers.push_back("Dgrad ms");
  if (fprop && dgrad) headers.push_back("Fprop+Dgrad ms");
  if (wgrad) headers.push_back("Wgrad ms");
  headers.push_back("per-layer ms");
  if (a.has_once_ops()) headers.push_back("once-per-model ms");
  headers.insert(headers.end(), {"full model ms", "items done"});
  bool b2b = false;
  for (const core::RecipeVariant& r : a.recipes())
    if (const Totals* t = a.FindTotals({r, mode}); t && t->b2b_complete()) b2b = true;
  if (b2b) headers.push_back("per-layer b2b ms");
  TextTable table(headers);
  for (const core::RecipeVariant& r : a.recipes()) {
    const Totals* t = a.FindTotals({r, mode});
    if (!t) continue;
    const auto& l = t->layer_ms;
    std::vector<std::string> cells = {Name(r)};
    if (fprop) cells.push_back(MsOrDash(*t, l[0]));
    if (dgrad) cells.push_back(MsOrDash(*t, l[1]));
    if (fprop && dgrad) cells.push_back(MsOrDash(*t, l[0] + l[1]));
    if (wgrad) cells.push_back(MsOrDash(*t, l[2]));
    cells.push_back(MsOrDash(*t, t->LayerMs()) +
                    (t->complete() && t->layer_ci.valid
                         ? " " + FormatPlusMinus(t->layer_ci.RelHalfWidth())
                         : ""));
    if (a.has_once_ops()) cells.push_back(MsOrDash(*t, t->once_ms));
    cells.push_back(MsOrDash(*t, t->ModelMs()));
    cells.push_back(std::to_string(t->done_items) + "/" + std::to_string(t->expected_items));
    if (b2b)
      cells.push_back(!t->b2b_complete()
                          ? "-"
                          : FormatMs(t->B2bLayerMs()) +
                                (t->b2b_layer_ci.valid
                                     ? " " + FormatPlusMinus(t->b2b_layer_ci.RelHalfWidth())
                                     : ""));
    table.AddRow(std::move(cells));
  }
  return Table(std::move(table), "Per layer and full model, " + Name(mode) + " (ms)");
}

std::string LayerNote(const Analysis& a) {
  if (a.is_shape_list())
    return "A shape list has no layers: \"per-layer\" and \"full model\" are the sum of the "
           "listed GEMMs, each run once.";
  std::string s = "Per-layer = sum over the per-layer GEMMs of time x layers / " +
                  std::to_string(a.num_layers()) + " layers; full model = sum of time x layers";
  if (a.has_once_ops()) s += ", plus once-per-model GEMMs (lm_head) once";
  return s + ". \"-\": the recipe has items without a result, so no total is shown.";
}

void SpeedupBlocks(const Analysis& a, Mode mode, std::vector<Block>& out) {
  const std::vector<core::RecipeVariant> done = a.CompleteRecipes(mode);
  const Totals* base = a.FindTotals({Recipe::kBf16, mode});
  if (base && base->complete() && done.size() > 1) {
    TextTable t({"recipe", "Fprop+Dgrad", "Wgrad", "per layer", "full model"});
    for (const core::RecipeVariant& r : done) {
      if (r == Recipe::kBf16) continue;
      auto ratio = [&](std::array<bool, 3> passes, bool full_model) {
        Scope scope;
        scope.passes = passes;
        scope.full_model = full_model;
        const core::stats::Interval i = a.TotalRatio({Recipe::kBf16, mode}, {r, mode}, scope);
        return i.center > 0 ? FormatRatioCi(i) : std::string("-");
      };
      t.AddRow({Name(r), ratio({true, true, false}, false), ratio({false, false, true}, false),
                ratio({true, true, true}, false), ratio({true, true, true}, true)});
    }
    out.push_back(Table(std::move(t), "Speedup vs bf16, " + Name(mode) +
                                          " (bf16 time / recipe time; > 1 is faster)"));
  }
  if (done.size() > 2) {
    std::vector<std::string> headers = {"recipe"};
    for (const core::RecipeVariant& c : done) headers.push_back("vs " + Name(c));
    TextTable t(headers);
    for (const core::RecipeVariant& r : done) {
      std::vector<std::string> cells = {Name(r)};
      for (const core::RecipeVariant& c : done)
        if (r == c) {
          cells.push_back("-");
        } else {
          // No ratio when a total is 0 ms (e.g. zero medians from a broken run).
          const std::optional<double> ratio = a.ModelSpeedup(r, c, mode);
          cells.push_back(ratio ? FormatRatioCi(a.ModelSpeedupCi(r, c, mode)) : "-");
        }
      t.AddRow(std::move(cells));
    }
    out.push_back(Table(std::move(t), "Speedup between recipes, full model, " + Name(mode) +
                                          " (column time / row time)"));
  }
}

// What the timing of a quantizing mode holds, for the overhead table's caption.
std::string TimedModeCaption(Mode timed) {
  return timed == Mode::kDynamic
             ? "Dynamic (inference: activations quantized inside the timing, weights before it) "
               "vs prequant (GEMM only)"
             : "Autocast (quantization timed) vs prequant (GEMM only)";
}

// The quantization a mode times (autocast or dynamic), against prequant.
std::optional<Block> ModesTable(const Analysis& a, Mode timed) {
  const std::string tm = Name(timed);
  bool rounds = false;
  for (const core::RecipeVariant& r : a.recipes()) {
    const Totals* ac = a.FindTotals({r, timed});
    const Totals* pq = a.FindTotals({r, Mode::kPrequant});
    rounds |= ac && pq && ac->has_rounds() && pq->has_rounds();
  }
  std::vector<std::string> headers = {"recipe", tm + " per-layer ms", "prequant per-layer ms",
                                      "overhead ms"};
  if (rounds) headers.push_back("overhead 95% interval");
  headers.insert(headers.end(),
                 {"overhead % of " + tm, tm + " full model ms", "prequant full model ms"});
  if (rounds) headers.push_back("bandwidth floor ms");
  TextTable t(headers);
  for (const core::RecipeVariant& r : a.recipes()) {
    const Totals* ac = a.FindTotals({r, timed});
    const Totals* pq = a.FindTotals({r, Mode::kPrequant});
    if (!ac || !pq || !ac->complete() || !pq->complete()) continue;
    const core::stats::Interval d = a.TotalDifference({r, timed}, {r, Mode::kPrequant});
    const double over = d.center;
    std::vector<std::string> cells = {Name(r), FormatMs(ac->LayerMs()), FormatMs(pq->LayerMs()),
                                      FormatMs(over)};
    if (rounds)
      cells.push_back(d.valid ? "[" + FormatMs(d.low) + "\u2013" + FormatMs(d.high) + "]" : "-");
    cells.insert(cells.end(),
                 {ac->LayerMs() > 0 ? FormatPercent(100.0 * over / ac->LayerMs()) : "-",
                  FormatMs(ac->ModelMs()), FormatMs(pq->ModelMs())});
    if (rounds) {
      const auto [bytes, copy] = report::QuantBytesPerLayer(a, r, timed);
      cells.push_back(bytes > 0 && copy > 0 ? FormatMs(report::OverheadFloorMs(bytes, copy)) : "-");
    }
    t.AddRow(std::move(cells));
  }
  if (t.empty()) return std::nullopt;
  Block b = Table(std::move(t), TimedModeCaption(timed));
  if (rounds)
    b.caption +=
        "; bandwidth floor: bytes quantization must move per layer / measured copy "
        "bandwidth";
  return b;
}

// Inference sweep: the model's forward time at each M per recipe, and the speedup vs
// bf16, instead of per-layer sums that would add different M together.
Section SweepSection(const Analysis& a) {
  Section s{"Inference sweep: full-model forward time per M", {}};
  for (Mode mode : a.modes()) {
    std::vector<std::string> headers = {"M (tokens)"};
    for (const core::RecipeVariant& r : a.recipes()) headers.push_back(Name(r) + " ms");
    for (const core::RecipeVariant& r : a.recipes())
      if (r != Recipe::kBf16) headers.push_back(Name(r) + " vs bf16");
    TextTable t(headers);
    for (int64_t m : a.sweep_ms()) {
      std::vector<std::string> cells = {std::to_string(m)};
      for (const core::RecipeVariant& r : a.recipes()) {
        const auto ms = a.SweepModelMs(m, {r, mode});
        cells.push_back(ms ? FormatMs(*ms) : "-");
      }
      const auto base = a.SweepModelMs(m, {Recipe::kBf16, mode});
      for (const core::RecipeVariant& r : a.recipes()) {
        if (r == Recipe::kBf16) continue;
        const auto ms = a.SweepModelMs(m, {r, mode});
        cells.push_back(base && ms && *ms > 0 ? FormatRatio(*base / *ms) : "-");
      }
      t.AddRow(std::move(cells));
    }
    s.blocks.push_back(Table(std::move(t), Name(mode) + " (sum of time x layers at each M)"));
  }
  s.blocks.push_back(Note("\"-\": a recipe without a result for every GEMM at that M."));
  return s;
}

}  // namespace

Document BuildReportDocument(const Analysis& a, bool with_chart) {
  const core::JobRecord& job = a.report().job;
  Document doc;
  doc.title = "gemmprof report: job " + std::to_string(job.id);
  doc.sections.push_back({"", {KeyValues(ContextFields(a))}});
  const std::vector<std::string> notices = report::BuildNotices(a);
  if (!notices.empty()) doc.sections.push_back({"Notices", {Bullets(notices)}});

  Section gemms{"Per-GEMM times", {}};
  for (core::Pass pass : a.passes())
    for (Mode mode : a.modes()) gemms.blocks.push_back(GemmTable(a, pass, mode));
  doc.sections.push_back(std::move(gemms));
  if (std::optional<Section> kernels = KernelTimingSection(a.report()))
    doc.sections.push_back(std::move(*kernels));
  if (std::optional<Section> energy = EnergySection(a)) doc.sections.push_back(std::move(*energy));
  if (std::optional<Section> experts = ExpertsSection(a))
    doc.sections.push_back(std::move(*experts));

  if (a.is_sweep()) {
    doc.sections.push_back(SweepSection(a));
    const std::vector<std::string> findings = report::BuildFindings(a);
    if (!findings.empty()) doc.sections.push_back({"Findings", {Bullets(findings)}});
    return doc;
  }
  Section layers{"Per layer and full model", {}};
  for (Mode mode : a.modes()) layers.blocks.push_back(LayerTable(a, mode));
  layers.blocks.push_back(Note(LayerNote(a)));
  doc.sections.push_back(std::move(layers));

  Section speedups{"Speedups", {}};
  for (Mode mode : a.modes()) SpeedupBlocks(a, mode, speedups.blocks);
  if (!speedups.blocks.empty()) doc.sections.push_back(std::move(speedups));

  std::vector<Block> overhead;
  for (Mode timed : {Mode::kAutocast, Mode::kDynamic}) {
    if (auto modes = ModesTable(a, timed)) overhead.push_back(*modes);
  }
  if (!overhead.empty()) doc.sections.push_back({"Quantization overhead", std::move(overhead)});
  const std::vector<std::string> findings = report::BuildFindings(a);
  if (!findings.empty()) doc.sections.push_back({"Findings", {Bullets(findings)}});
  if (with_chart)
    doc.sections.push_back({"Chart: per-layer time by recipe", {Lines(RenderTerminalChart(a))}});
  return doc;
}

std::string RenderReportTable(const core::Report& report, bool with_chart) {
  return RenderText(BuildReportDocument(Analysis(report), with_chart));
}

std::string RenderReportMarkdown(const core::Report& report, bool with_chart) {
  return RenderMarkdown(BuildReportDocument(Analysis(report), with_chart));
}

}  // namespace gemmprof::client::render
