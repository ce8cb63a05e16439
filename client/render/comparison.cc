#include "client/render/comparison.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

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

bool HasTime(const core::ItemRecord& r) {
  return r.status == core::ItemStatus::kDone && r.result && r.result->time.median_ms > 0;
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

Comparison CompareReports(const core::Report& a, const core::Report& b) {
  Comparison c;
  ContextDiffs(a.job, b.job, c.context_diffs);
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
    const core::SampleStats& sa = r.result->time;
    const core::SampleStats& sb = it->second->result->time;
    ItemComparison ic{r.item.op,
                      r.item.recipe,
                      r.item.mode,
                      sa.median_ms,
                      sb.median_ms,
                      sb.median_ms / sa.median_ms,
                      NoiseThreshold(sa, sb),
                      Verdict::kSame};
    ic.verdict = Judge(ic.a_ms, ic.b_ms, ic.threshold);
    (ic.verdict == Verdict::kFaster   ? c.faster
     : ic.verdict == Verdict::kSlower ? c.slower
                                      : c.same)++;
    c.items.push_back(std::move(ic));
  }
  for (const auto& [key, r] : in_b)
    if (!matched.count(key)) c.only_in_b.push_back(Unmatched(*r));
  CompareLayers(a, b, c);
  return c;
}

std::string RenderComparison(const Comparison& c, int64_t job_a, int64_t job_b) {
  const std::string a = "job " + std::to_string(job_a), b = "job " + std::to_string(job_b);
  Document doc;
  doc.title = "gemmprof compare: " + a + " (A) vs " + b + " (B)";
  if (!c.context_diffs.empty())
    doc.sections.push_back({"Context differences", {Bullets(c.context_diffs)}});
  TextTable items(
      {"pass", "op", "MxKxN", "groups", "recipe", "mode", "A ms", "B ms", "B/A", "noise threshold",
       "verdict"},
      {Align::kLeft, Align::kLeft, Align::kLeft, Align::kRight, Align::kLeft, Align::kLeft,
       Align::kRight, Align::kRight, Align::kRight, Align::kRight, Align::kLeft});
  for (const ItemComparison& i : c.items)
    items.AddRow({std::string(core::ToString(i.op.pass)), i.op.name, i.op.shape.ToString(),
                  std::to_string(i.op.groups), std::string(core::ToString(i.recipe)),
                  std::string(core::ToString(i.mode)), FormatMs(i.a_ms), FormatMs(i.b_ms),
                  FormatRatio(i.ratio), FormatPercent(100 * i.threshold),
                  std::string(ToString(i.verdict))});
  Section per_item{"Per item (median ms; B/A > 1: B is slower)", {Table(std::move(items))}};
  per_item.blocks.push_back(
      Note(std::string("A verdict needs a change above the noise threshold ") + kNoiseRule +
           "; below it the two are \"same\"."));
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
  return RenderText(doc);
}

}  // namespace gemmprof::client::render
