#include "client/render/comparison.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "client/render/document.h"
#include "client/render/format.h"
#include "report/analysis.h"

namespace gemmprof::client::render {

using report::Comparison;
using report::ItemComparison;
using report::kClockDriftNote;
using report::kMinRelativeChange;
using report::kNoiseRule;
using report::LayerComparison;
using report::RunningConditions;
using report::UnmatchedItem;

std::string UnmatchedLine(const std::string& side, const std::vector<UnmatchedItem>& items) {
  constexpr size_t kMaxNamed = 5;
  std::map<report::RecipeMode, int> groups;
  for (const UnmatchedItem& u : items) ++groups[{u.recipe, u.mode}];
  std::string line = "only in " + side + ": " + std::to_string(items.size()) +
                     (items.size() == 1 ? " item (" : " items (");
  size_t named = 0;
  for (const auto& [key, count] : groups) {
    if (named == kMaxNamed) {
      line += ", ... and " + std::to_string(groups.size() - kMaxNamed) + " more";
      break;
    }
    line += (named++ ? ", " : "") + std::string(core::ToString(key.recipe)) + "/" +
            std::string(core::ToString(key.mode)) + " " + std::to_string(count);
  }
  line += ")";
  if (items.size() <= kMaxNamed)
    for (size_t i = 0; i < items.size(); ++i) line += (i ? ", " : ": ") + items[i].label;
  return line;
}

namespace {

Records ComparisonRecords(const Comparison& c) {
  Records r;
  r.columns = {"pass",
               "op",
               "m",
               "k",
               "n",
               "groups",
               "recipe",
               "mode",
               "a_ms",
               "b_ms",
               "ratio",
               "ratio_ci_low",
               "ratio_ci_high",
               "noise_threshold",
               "verdict",
               "b2b_a_ms",
               "b2b_b_ms",
               "b2b_ratio",
               "b2b_ratio_ci_low",
               "b2b_ratio_ci_high",
               "b2b_verdict",
               "a_joules",
               "b_joules",
               "energy_ratio",
               "energy_ratio_ci_low",
               "energy_ratio_ci_high",
               "energy_verdict"};
  auto opt = [](bool present, double v) { return present ? Cell{v} : Cell{}; };
  for (const ItemComparison& i : c.items) {
    const bool b2b = i.b2b_a_ms > 0, j = i.has_energy();
    r.Add({std::string(core::ToString(i.op.pass)), i.op.name, i.op.shape.m, i.op.shape.k,
           i.op.shape.n, int64_t{i.op.groups}, std::string(core::ToString(i.recipe)),
           std::string(core::ToString(i.mode)), i.a_ms, i.b_ms, i.ratio,
           opt(i.ratio_ci.valid, i.ratio_ci.low), opt(i.ratio_ci.valid, i.ratio_ci.high),
           // With intervals the verdict's threshold is the minimum change.
           i.ratio_ci.valid ? kMinRelativeChange : i.threshold, std::string(ToString(i.verdict)),
           opt(b2b, i.b2b_a_ms), opt(b2b, i.b2b_b_ms), opt(b2b, i.b2b_ratio_ci.center),
           opt(b2b && i.b2b_ratio_ci.valid, i.b2b_ratio_ci.low),
           opt(b2b && i.b2b_ratio_ci.valid, i.b2b_ratio_ci.high),
           b2b ? Cell{std::string(ToString(i.b2b_verdict))} : Cell{}, opt(j, i.a_joules),
           opt(j, i.b_joules), opt(j, i.energy_ratio_ci.center),
           opt(j && i.energy_ratio_ci.valid, i.energy_ratio_ci.low),
           opt(j && i.energy_ratio_ci.valid, i.energy_ratio_ci.high),
           j ? Cell{std::string(report::EnergyWord(i.energy_verdict))} : Cell{}});
  }
  return r;
}

nlohmann::ordered_json ComparisonSummary(const Comparison& c, int64_t job_a, int64_t job_b) {
  using Json = nlohmann::ordered_json;
  Json layers = Json::array();
  for (const LayerComparison& l : c.layers)
    layers.push_back({{"recipe", std::string(core::ToString(l.recipe))},
                      {"mode", std::string(core::ToString(l.mode))},
                      {"a_per_layer_ms", l.a_ms},
                      {"b_per_layer_ms", l.b_ms},
                      {"ratio", l.ratio},
                      {"a_per_layer_joules", l.a_joules > 0 ? Json(l.a_joules) : Json()},
                      {"b_per_layer_joules", l.b_joules > 0 ? Json(l.b_joules) : Json()}});
  auto unmatched = [](const std::vector<UnmatchedItem>& items) {
    Json out = Json::array();
    for (const UnmatchedItem& u : items)
      out.push_back({{"item", u.label},
                     {"recipe", std::string(core::ToString(u.recipe))},
                     {"mode", std::string(core::ToString(u.mode))}});
    return out;
  };
  auto conditions = [](const RunningConditions& rc) {
    return Json{{"items", rc.items},
                {"sm_clock_mhz", rc.sm_clock_mhz},
                {"sm_clock_min_mhz", rc.sm_clock_min_mhz},
                {"power_w", rc.power_w},
                {"temp_c", rc.temp_c},
                {"throttled_share", rc.throttled_share}};
  };
  Json running = nullptr;
  if (c.conditions_a.items > 0)
    running = {{"a", conditions(c.conditions_a)}, {"b", conditions(c.conditions_b)}};
  return {{"job_a", job_a},
          {"job_b", job_b},
          {"noise_rule", kNoiseRule},
          {"running_conditions", running},
          {"matched", c.items.size()},
          {"faster", c.faster},
          {"same", c.same},
          {"slower", c.slower},
          {"context_differences", c.context_diffs},
          {"layers", layers},
          {"only_in_a", unmatched(c.only_in_a)},
          {"only_in_b", unmatched(c.only_in_b)}};
}

// Both jobs' running state over the matched items, and what a clock difference means.
Section ConditionsSection(const Comparison& c) {
  TextTable table({"job", "items", "SM clock MHz", "lowest SM clock MHz", "power W",
                   "max temperature C", "throttled samples"},
                  {Align::kLeft, Align::kRight, Align::kRight, Align::kRight, Align::kRight,
                   Align::kRight, Align::kRight});
  for (const auto& [name, rc] :
       {std::pair<const char*, const RunningConditions&>{"A", c.conditions_a},
        {"B", c.conditions_b}}) {
    table.AddRow({name, std::to_string(rc.items), FormatFixed(rc.sm_clock_mhz, 0),
                  FormatFixed(rc.sm_clock_min_mhz, 0), FormatFixed(rc.power_w, 0),
                  FormatFixed(rc.temp_c, 1), FormatPercent(100 * rc.throttled_share)});
  }
  Section section{"Running conditions (medians over the matched items; power: their mean)",
                  {Table(std::move(table))}};
  const double a = c.conditions_a.sm_clock_mhz, b = c.conditions_b.sm_clock_mhz;
  if (a > 0 && b > 0 && std::abs(b / a - 1) >= kClockDriftNote) {
    section.blocks.push_back(Note(
        "B ran at a " + FormatPercent(100 * std::abs(b / a - 1)) + (b < a ? " lower" : " higher") +
        " SM clock than A: a change of about that size on every item is the GPU's running "
        "state (power cap, temperature) drifting between the jobs, not a change in the GEMMs."));
  }
  return section;
}

// "[0.981-1.004]" (en dash), "-" without an interval.
std::string Range(const core::stats::Interval& i) {
  return i.valid ? "[" + FormatFixed(i.low, 3) + "\u2013" + FormatFixed(i.high, 3) + "]"
                 : std::string("-");
}

// The per-item table: the B/A interval column where any item has one, the back-to-back
// columns where any item measured them, and the notes that say how a verdict is made.
Section ItemsSection(const Comparison& c) {
  bool intervals = false, b2b = false, energy = false;
  for (const ItemComparison& i : c.items) {
    intervals |= i.ratio_ci.valid;
    b2b |= i.b2b_a_ms > 0;
    energy |= i.has_energy();
  }
  std::vector<std::string> headers = {"pass", "op",   "MxKxN", "groups", "recipe",
                                      "mode", "A ms", "B ms",  "B/A"};
  std::vector<Align> align = {Align::kLeft,  Align::kLeft,  Align::kLeft,
                              Align::kRight, Align::kLeft,  Align::kLeft,
                              Align::kRight, Align::kRight, Align::kRight};
  if (intervals) headers.push_back("B/A 95% interval");
  headers.push_back("noise threshold");
  headers.push_back("verdict");
  if (b2b) headers.insert(headers.end(), {"A b2b ms", "B b2b ms", "b2b B/A", "b2b verdict"});
  if (energy)
    headers.insert(headers.end(), {"A energy", "B energy", "energy B/A", "energy verdict"});
  align.resize(headers.size(), Align::kRight);
  align[headers.size() - 1 - (b2b ? 4 : 0) - (energy ? 4 : 0)] = Align::kLeft;
  if (b2b) align[headers.size() - 1 - (energy ? 4 : 0)] = Align::kLeft;
  if (energy) align.back() = Align::kLeft;
  TextTable items(headers, align);
  for (const ItemComparison& i : c.items) {
    std::vector<std::string> cells = {std::string(core::ToString(i.op.pass)),
                                      i.op.name,
                                      i.op.shape.ToString(),
                                      std::to_string(i.op.groups),
                                      std::string(core::ToString(i.recipe)),
                                      std::string(core::ToString(i.mode)),
                                      FormatMs(i.a_ms),
                                      FormatMs(i.b_ms),
                                      FormatRatio(i.ratio)};
    if (intervals) cells.push_back(Range(i.ratio_ci));
    cells.push_back(i.ratio_ci.valid ? "interval, " + FormatPercent(100 * kMinRelativeChange)
                                     : FormatPercent(100 * i.threshold));
    cells.push_back(std::string(ToString(i.verdict)));
    if (b2b) {
      if (i.b2b_a_ms > 0)
        cells.insert(cells.end(), {FormatMs(i.b2b_a_ms), FormatMs(i.b2b_b_ms),
                                   FormatRatio(i.b2b_ratio_ci.center) + " " + Range(i.b2b_ratio_ci),
                                   std::string(ToString(i.b2b_verdict))});
      else
        cells.insert(cells.end(), {"-", "-", "-", "-"});
    }
    if (energy) {
      if (i.has_energy())
        cells.insert(cells.end(),
                     {FormatJoules(i.a_joules), FormatJoules(i.b_joules),
                      FormatRatio(i.energy_ratio_ci.center) + " " + Range(i.energy_ratio_ci),
                      std::string(report::EnergyWord(i.energy_verdict))});
      else
        cells.insert(cells.end(), {"-", "-", "-", "-"});
    }
    items.AddRow(std::move(cells));
  }
  Section per_item{"Per item (median ms; B/A > 1: B is slower)", {Table(std::move(items))}};
  per_item.blocks.push_back(
      Note(std::string("A verdict needs a change above the noise threshold ") + kNoiseRule +
           "; below it the two are \"same\"."));
  if (intervals)
    per_item.blocks.push_back(
        Note("Items measured in interleaved rounds on both sides: ms is the rounds' mean, and a "
             "verdict needs the unpaired 95% interval of B/A to exclude 1 and a change above " +
             FormatPercent(100 * kMinRelativeChange) +
             " (drift between jobs is not inside either job's interval)." +
             (b2b ? " b2b: back to back, several GEMMs per graph, judged the same way." : "")));
  if (energy)
    per_item.blocks.push_back(
        Note("Energy: joules per GEMM (with its quantization where the mode times it) from each "
             "job's own energy window (submit --energy), B/A with the unpaired 95% interval of "
             "the two windows, judged as the times are. Both jobs' boards at their power cap "
             "read alike only when their running conditions above do."));
  return per_item;
}

// Per-layer totals; the energy columns where any recipe has joules on both sides.
Section LayersSection(const Comparison& c) {
  const bool energy = std::any_of(c.layers.begin(), c.layers.end(),
                                  [](const LayerComparison& l) { return l.a_joules > 0; });
  std::vector<std::string> headers = {"recipe", "mode", "A per-layer ms", "B per-layer ms", "B/A"};
  if (energy)
    headers.insert(headers.end(), {"A per-layer energy", "B per-layer energy", "energy B/A"});
  std::vector<Align> align(headers.size(), Align::kRight);
  align[0] = align[1] = Align::kLeft;
  TextTable layers(headers, align);
  for (const LayerComparison& l : c.layers) {
    std::vector<std::string> cells = {std::string(core::ToString(l.recipe)),
                                      std::string(core::ToString(l.mode)), FormatMs(l.a_ms),
                                      FormatMs(l.b_ms), FormatRatio(l.ratio)};
    if (energy) {
      const bool j = l.a_joules > 0;
      cells.insert(cells.end(),
                   {j ? FormatJoules(l.a_joules) : "-", j ? FormatJoules(l.b_joules) : "-",
                    j ? FormatRatio(l.b_joules / l.a_joules) : "-"});
    }
    layers.AddRow(std::move(cells));
  }
  return {"Per layer", {Table(std::move(layers))}};
}

}  // namespace

Listing ComparisonListing(const Comparison& c, int64_t job_a, int64_t job_b) {
  const std::string a = "job " + std::to_string(job_a), b = "job " + std::to_string(job_b);
  Document doc;
  doc.title = "gemmprof compare: " + a + " (A) vs " + b + " (B)";
  if (!c.context_diffs.empty())
    doc.sections.push_back({"Context differences", {Bullets(c.context_diffs)}});
  if (c.conditions_a.items > 0) doc.sections.push_back(ConditionsSection(c));
  doc.sections.push_back(ItemsSection(c));
  if (!c.layers.empty()) doc.sections.push_back(LayersSection(c));
  std::vector<std::string> unmatched;
  if (!c.only_in_a.empty()) unmatched.push_back(UnmatchedLine("A", c.only_in_a));
  if (!c.only_in_b.empty()) unmatched.push_back(UnmatchedLine("B", c.only_in_b));
  if (!unmatched.empty()) doc.sections.push_back({"Unmatched items", {Bullets(unmatched)}});
  doc.sections.push_back({"Summary",
                          {Lines({std::to_string(c.items.size()) + " matched items: " +
                                  std::to_string(c.faster) + " faster, " + std::to_string(c.same) +
                                  " same, " + std::to_string(c.slower) + " slower in B"})}});
  Listing listing;
  listing.doc = std::move(doc);
  listing.records = ComparisonRecords(c);
  listing.rows_key = "items";
  listing.summary = ComparisonSummary(c, job_a, job_b);
  return listing;
}

}  // namespace gemmprof::client::render
