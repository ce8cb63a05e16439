#include "client/render/comparison.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

#include "client/render/claim.h"
#include "client/render/document.h"
#include "client/render/format.h"
#include "client/render/report_analysis.h"

namespace gemmprof::client::render {
namespace {

// The op name is part of the key: with --split-gate-up, gate and up share every other
// field, and each must meet its own counterpart.
using Key = std::tuple<int64_t, int64_t, int64_t, core::Pass, core::Recipe, core::Mode, int64_t,
                       std::string>;

Key KeyOf(const core::ItemRecord& r) {
  const core::GemmOp& op = r.item.op;
  return {op.shape.m,    op.shape.k,  op.shape.n, op.pass,
          r.item.recipe, r.item.mode, op.groups,  op.name};
}

UnmatchedItem Unmatched(const core::ItemRecord& r) {
  return {ItemLabel(r), r.item.recipe, r.item.mode};
}

double Headline(const core::Measurement& m) {
  return m.isolated.present() ? m.isolated.center_ms : m.time.median_ms;
}

bool HasTime(const core::ItemRecord& r) {
  return r.status == core::ItemStatus::kDone && r.result && Headline(*r.result) > 0;
}

// Times, ratio and verdict of one matched pair; intervals when both sides have rounds.
ItemComparison CompareItem(const core::Measurement& a, const core::Measurement& b) {
  ItemComparison ic;
  ic.a_ms = Headline(a);
  ic.b_ms = Headline(b);
  ic.ratio = ic.b_ms / ic.a_ms;
  if (a.isolated.present() && b.isolated.present()) {
    ic.ratio_ci = core::stats::UnpairedRatio(b.isolated, a.isolated);
    ic.ratio_ci.center = ic.ratio;
    ic.verdict = JudgeInterval(ic.ratio_ci);
  } else {
    ic.threshold = NoiseThreshold(a.time, b.time);
    ic.verdict = Judge(ic.a_ms, ic.b_ms, ic.threshold);
  }
  if (a.b2b.present() && b.b2b.present() && a.b2b.center_ms > 0) {
    ic.b2b_a_ms = a.b2b.center_ms;
    ic.b2b_b_ms = b.b2b.center_ms;
    ic.b2b_ratio_ci = core::stats::UnpairedRatio(b.b2b, a.b2b);
    ic.b2b_ratio_ci.center = ic.b2b_b_ms / ic.b2b_a_ms;
    ic.b2b_verdict = JudgeInterval(ic.b2b_ratio_ci);
  }
  return ic;
}

void Diff(const std::string& what, const std::string& a, const std::string& b,
          std::vector<std::string>& out) {
  if (a != b) out.push_back(what + ": " + (a.empty() ? "?" : a) + " -> " + (b.empty() ? "?" : b));
}

void ContextDiffs(const core::JobRecord& a, const core::JobRecord& b,
                  std::vector<std::string>& out) {
  Diff("device", a.device.name, b.device.name, out);
  Diff("backend", a.device.backend, b.device.backend, out);
  Diff("driver", a.device.driver_version, b.device.driver_version, out);
  Diff("CUDA", a.device.cuda_version, b.device.cuda_version, out);
  Diff("cuBLASLt", a.device.cublaslt_version, b.device.cublaslt_version, out);
  Diff("gemmprof", a.device.gemmprof_version, b.device.gemmprof_version, out);
  Diff("timing options", a.spec.timing.CacheText(), b.spec.timing.CacheText(), out);
}

void CompareLayers(const core::Report& a, const core::Report& b, Comparison& c) {
  const ReportAnalysis la(a), lb(b);
  for (core::Mode mode : la.modes())
    for (core::Recipe r : la.CompleteRecipes(mode)) {
      const Totals* tb = lb.FindTotals({r, mode});
      if (!tb || !tb->complete()) continue;
      const double a_ms = la.FindTotals({r, mode})->LayerMs();
      c.layers.push_back({r, mode, a_ms, tb->LayerMs(), a_ms > 0 ? tb->LayerMs() / a_ms : 0});
    }
}

}  // namespace

std::string_view ToString(Verdict v) {
  switch (v) {
    case Verdict::kFaster:
      return "faster";
    case Verdict::kSame:
      return "same";
    case Verdict::kSlower:
      return "slower";
  }
  return "?";
}

double RelativeHalfSpread(const core::SampleStats& s) {
  return s.median_ms > 0 ? (s.p80_ms - s.p20_ms) / (2 * s.median_ms) : 0;
}

double NoiseThreshold(const core::SampleStats& a, const core::SampleStats& b) {
  const double ha = RelativeHalfSpread(a), hb = RelativeHalfSpread(b);
  return std::max(kMinRelativeChange, kNoiseSigmas * std::sqrt(ha * ha + hb * hb));
}

Verdict Judge(double a_ms, double b_ms, double threshold) {
  const double change = b_ms / a_ms - 1;
  if (change > threshold) return Verdict::kSlower;
  if (change < -threshold) return Verdict::kFaster;
  return Verdict::kSame;
}

Verdict JudgeInterval(const core::stats::Interval& ratio) {
  if (std::fabs(ratio.center - 1) <= kMinRelativeChange) return Verdict::kSame;
  switch (ClaimOf(ratio)) {
    case Claim::kFaster:
      return Verdict::kFaster;
    case Claim::kSlower:
      return Verdict::kSlower;
    default:
      return Verdict::kSame;
  }
}

std::string UnmatchedLine(const std::string& side, const std::vector<UnmatchedItem>& items) {
  constexpr size_t kMaxNamed = 5;
  std::map<RecipeMode, int> groups;
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

RunningConditions ConditionsOf(const std::vector<const core::Measurement*>& items) {
  RunningConditions c;
  std::vector<double> clock, clock_min, temp;
  double power = 0;
  int64_t throttled = 0, samples = 0;
  for (const core::Measurement* m : items) {
    const core::Telemetry& t = m->telemetry;
    if (t.telemetry_samples <= 0) continue;
    ++c.items;
    clock.push_back(t.sm_clock_mhz_mean > 0 ? t.sm_clock_mhz_mean
                                            : (t.sm_clock_mhz_min + t.sm_clock_mhz_max) / 2);
    clock_min.push_back(t.sm_clock_mhz_min);
    temp.push_back(t.temp_c_max);
    power += t.power_w_avg;
    throttled += t.throttled_samples;
    samples += t.telemetry_samples;
  }
  if (c.items == 0) return c;
  auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const size_t n = v.size();
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
  };
  c.sm_clock_mhz = median(clock);
  c.sm_clock_min_mhz = median(clock_min);
  c.temp_c = median(temp);
  c.power_w = power / c.items;
  c.throttled_share = static_cast<double>(throttled) / static_cast<double>(samples);
  return c;
}

Comparison CompareReports(const core::Report& a, const core::Report& b) {
  Comparison c;
  ContextDiffs(a.job, b.job, c.context_diffs);
  std::vector<const core::Measurement*> telemetry_a, telemetry_b;
  std::map<Key, const core::ItemRecord*> in_b;
  for (const auto& r : b.items)
    if (HasTime(r)) in_b.emplace(KeyOf(r), &r);
  std::map<Key, bool> matched;
  for (const auto& r : a.items) {
    if (!HasTime(r)) continue;
    auto it = in_b.find(KeyOf(r));
    if (it == in_b.end()) {
      c.only_in_a.push_back(Unmatched(r));
      continue;
    }
    matched[it->first] = true;
    if (r.result->telemetry.telemetry_samples > 0 &&
        it->second->result->telemetry.telemetry_samples > 0) {
      telemetry_a.push_back(&*r.result);
      telemetry_b.push_back(&*it->second->result);
    }
    ItemComparison ic = CompareItem(*r.result, *it->second->result);
    ic.op = r.item.op;
    ic.recipe = r.item.recipe;
    ic.mode = r.item.mode;
    (ic.verdict == Verdict::kFaster   ? c.faster
     : ic.verdict == Verdict::kSlower ? c.slower
                                      : c.same)++;
    c.items.push_back(std::move(ic));
  }
  for (const auto& [key, r] : in_b)
    if (!matched.count(key)) c.only_in_b.push_back(Unmatched(*r));
  CompareLayers(a, b, c);
  c.conditions_a = ConditionsOf(telemetry_a);
  c.conditions_b = ConditionsOf(telemetry_b);
  return c;
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
               "b2b_verdict"};
  auto opt = [](bool present, double v) { return present ? Cell{v} : Cell{}; };
  for (const ItemComparison& i : c.items) {
    const bool b2b = i.b2b_a_ms > 0;
    r.Add({std::string(core::ToString(i.op.pass)), i.op.name, i.op.shape.m, i.op.shape.k,
           i.op.shape.n, int64_t{i.op.groups}, std::string(core::ToString(i.recipe)),
           std::string(core::ToString(i.mode)), i.a_ms, i.b_ms, i.ratio,
           opt(i.ratio_ci.valid, i.ratio_ci.low), opt(i.ratio_ci.valid, i.ratio_ci.high),
           // With intervals the verdict's threshold is the minimum change.
           i.ratio_ci.valid ? kMinRelativeChange : i.threshold, std::string(ToString(i.verdict)),
           opt(b2b, i.b2b_a_ms), opt(b2b, i.b2b_b_ms), opt(b2b, i.b2b_ratio_ci.center),
           opt(b2b && i.b2b_ratio_ci.valid, i.b2b_ratio_ci.low),
           opt(b2b && i.b2b_ratio_ci.valid, i.b2b_ratio_ci.high),
           b2b ? Cell{std::string(ToString(i.b2b_verdict))} : Cell{}});
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
                      {"ratio", l.ratio}});
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

}  // namespace

std::string RenderComparison(const Comparison& c, int64_t job_a, int64_t job_b) {
  return RenderListing(ComparisonListing(c, job_a, job_b), ListingFormat::kTable);
}

Listing ComparisonListing(const Comparison& c, int64_t job_a, int64_t job_b) {
  const std::string a = "job " + std::to_string(job_a), b = "job " + std::to_string(job_b);
  Document doc;
  doc.title = "gemmprof compare: " + a + " (A) vs " + b + " (B)";
  if (!c.context_diffs.empty())
    doc.sections.push_back({"Context differences", {Bullets(c.context_diffs)}});
  if (c.conditions_a.items > 0) doc.sections.push_back(ConditionsSection(c));
  bool intervals = false, b2b = false;
  for (const ItemComparison& i : c.items) {
    intervals |= i.ratio_ci.valid;
    b2b |= i.b2b_a_ms > 0;
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
  align.resize(headers.size(), Align::kRight);
  align[headers.size() - 1 - (b2b ? 4 : 0)] = Align::kLeft;
  if (b2b) align.back() = Align::kLeft;
  TextTable items(headers, align);
  auto range = [](const core::stats::Interval& i) {
    return i.valid ? "[" + FormatFixed(i.low, 3) + "\u2013" + FormatFixed(i.high, 3) + "]"
                   : std::string("-");
  };
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
    if (intervals) cells.push_back(range(i.ratio_ci));
    cells.push_back(i.ratio_ci.valid ? "interval, " + FormatPercent(100 * kMinRelativeChange)
                                     : FormatPercent(100 * i.threshold));
    cells.push_back(std::string(ToString(i.verdict)));
    if (b2b) {
      if (i.b2b_a_ms > 0)
        cells.insert(cells.end(), {FormatMs(i.b2b_a_ms), FormatMs(i.b2b_b_ms),
                                   FormatRatio(i.b2b_ratio_ci.center) + " " + range(i.b2b_ratio_ci),
                                   std::string(ToString(i.b2b_verdict))});
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
  doc.sections.push_back(std::move(per_item));
  if (!c.layers.empty()) {
    TextTable layers({"recipe", "mode", "A per-layer ms", "B per-layer ms", "B/A"});
    for (const LayerComparison& l : c.layers)
      layers.AddRow({std::string(core::ToString(l.recipe)), std::string(core::ToString(l.mode)),
                     FormatMs(l.a_ms), FormatMs(l.b_ms), FormatRatio(l.ratio)});
    doc.sections.push_back({"Per layer", {Table(std::move(layers))}});
  }
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
