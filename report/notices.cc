#include "report/notices.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <string_view>

#include "core/derive.h"
#include "report/batches.h"
#include "report/clocks_event_reasons.h"
#include "report/format.h"

namespace gemmprof::report {
namespace {

constexpr size_t kMaxLinesPerCategory = 8;
// Items named in one summary line before "... and N more".
constexpr size_t kMaxNamedItems = 5;

// Appends `lines` to `out`, keeping at most kMaxLinesPerCategory of them.
void AppendCapped(const std::vector<std::string>& lines, std::vector<std::string>& out) {
  for (size_t i = 0; i < lines.size() && i < kMaxLinesPerCategory; ++i) out.push_back(lines[i]);
  if (lines.size() > kMaxLinesPerCategory)
    out.push_back("... and " + std::to_string(lines.size() - kMaxLinesPerCategory) +
                  " more like this");
}

std::string Sci(double v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.2e", v);
  return buf;
}

// The item's error without the daemon's own naming of the item, which the note gives.
std::string FailureReason(const core::ItemRecord& item) {
  if (item.error.empty()) return "no reason given";
  const std::string self = core::DescribeItem(item.item) + ": ";
  if (item.error.rfind(self, 0) == 0) return item.error.substr(self.size());
  return item.error;
}

void StatusNotices(const core::Report& report, std::vector<std::string>& out) {
  std::vector<std::string> failed, wrong;
  // Keyed by recipe and reason: one recipe can be refused for different reasons (the
  // device lacks it; a shape it cannot take; a grouped GEMM it does not implement).
  std::map<std::pair<core::Recipe, std::string>, int> unsupported;
  int cancelled = 0;
  for (const auto& item : report.items) {
    if (item.status == core::ItemStatus::kFailed)
      failed.push_back("failed: " + ItemLabel(item) + ": " + FailureReason(item));
    if (item.status == core::ItemStatus::kCancelled) ++cancelled;
    if (item.status == core::ItemStatus::kNotSupported)
      ++unsupported[{item.item.recipe, item.error}];
    if (item.result && item.result->verification == core::Verification::kIncorrect)
      wrong.push_back("wrong results: " + ItemLabel(item) + " relative error " +
                      Sci(item.result->rel_error) + " > threshold " +
                      Sci(item.result->error_threshold) + "; its time is not comparable");
  }
  AppendCapped(failed, out);
  AppendCapped(wrong, out);
  for (const auto& [key, count] : unsupported) {
    const auto& [recipe, reason] = key;
    out.push_back("not supported: " + std::string(core::ToString(recipe)) + " (" +
                  std::to_string(count) + (count == 1 ? " item): " : " items): ") +
                  (reason.empty() ? "no reason given" : reason));
  }
  if (cancelled > 0)
    out.push_back("cancelled: " + std::to_string(cancelled) + " items did not run");
}

// "a, b, c, d, e ... and 3 more": at most kMaxNamedItems of `names`.
std::string NameSome(const std::vector<std::string>& names) {
  std::string out;
  for (size_t i = 0; i < names.size() && i < kMaxNamedItems; ++i) out += (i ? ", " : "") + names[i];
  if (names.size() > kMaxNamedItems)
    out += " ... and " + std::to_string(names.size() - kMaxNamedItems) + " more";
  return out;
}

// True for the note the CUDA runner writes for throttled telemetry
// (kernels/runner/cuda_runner_measure.cc), which the throttle summary already says.
bool IsRunnerThrottleNote(std::string_view note) {
  return note.find(" telemetry samples throttled (clocks-event reasons ") != note.npos;
}

// The item's notes without what the throttle summary already says; "" when nothing is left.
std::string NotesBeyondThrottle(const core::Measurement& m) {
  if (m.telemetry.throttled_samples <= 0) return m.notes;
  std::string out;
  size_t begin = 0;
  while (begin <= m.notes.size()) {
    size_t end = m.notes.find("; ", begin);
    if (end == std::string::npos) end = m.notes.size();
    const std::string_view part = std::string_view(m.notes).substr(begin, end - begin);
    if (!part.empty() && !IsRunnerThrottleNote(part))
      out += (out.empty() ? "" : "; ") + std::string(part);
    begin = end + 2;
  }
  return out;
}

// Measured items whose telemetry saw a throttle, grouped by the set of reasons.
struct ThrottleGroup {
  int64_t throttled_samples = 0, telemetry_samples = 0;
  std::vector<std::string> items;
};

// One line per distinct set of throttle reasons: how many measured items, which reasons,
// how many samples, what it means; the items are named only when they are a minority.
void ThrottleNotices(const core::Report& report, int measured, std::vector<std::string>& out) {
  std::map<uint64_t, ThrottleGroup> groups;
  for (const auto& item : report.items) {
    if (!item.result || item.result->telemetry.throttled_samples <= 0) continue;
    const core::Telemetry& t = item.result->telemetry;
    ThrottleGroup& g = groups[t.throttle_reasons & ~kClocksEventGpuIdle];
    g.throttled_samples += t.throttled_samples;
    g.telemetry_samples += t.telemetry_samples;
    g.items.push_back(ItemLabel(item));
  }
  for (const auto& [reasons, g] : groups) {
    const std::string names = ClocksEventReasonNames(reasons);
    std::string line = "throttled: " + FormatCount(static_cast<int64_t>(g.items.size())) + " of " +
                       FormatCount(measured) + " measured items ran with clocks held back (" +
                       (names.empty() ? "reason not reported" : names) + "; " +
                       FormatCount(g.throttled_samples) + " of " +
                       FormatCount(g.telemetry_samples) + " telemetry samples)";
    if (2 * g.items.size() < static_cast<size_t>(measured)) line += ": " + NameSome(g.items);
    if (const std::string impact = ClocksEventImpact(reasons); !impact.empty())
      line += "; " + impact;
    out.push_back(line);
  }
}

// Relative spreads of an item's samples: stdev / median and (p80 - p20) / median.
struct Spread {
  double stdev = 0, p20_p80 = 0;
  std::string label;
};

// One line for every item whose stdev or p20-p80 spread exceeds kHighSpreadRatio of its
// median: the count and the worst few by p20-p80 (the spread that moves a median).
void SpreadNotice(const core::Report& report, int measured, std::vector<std::string>& out) {
  std::vector<Spread> high;
  for (const auto& item : report.items) {
    if (!item.result || item.result->time.median_ms <= 0) continue;
    const core::SampleStats& t = item.result->time;
    const Spread s{t.stdev_ms / t.median_ms, (t.p80_ms - t.p20_ms) / t.median_ms, ItemLabel(item)};
    if (s.stdev > kHighSpreadRatio || s.p20_p80 > kHighSpreadRatio) high.push_back(s);
  }
  if (high.empty()) return;
  std::stable_sort(high.begin(), high.end(), [](const Spread& x, const Spread& y) {
    return x.p20_p80 != y.p20_p80 ? x.p20_p80 > y.p20_p80 : x.stdev > y.stdev;
  });
  const bool outliers_only = std::all_of(
      high.begin(), high.end(), [](const Spread& s) { return s.p20_p80 <= kHighSpreadRatio; });
  std::vector<std::string> worst;
  for (const Spread& s : high)
    worst.push_back(s.label + " (p20-p80 " + FormatPercent(100 * s.p20_p80) + ", stdev " +
                    FormatPercent(100 * s.stdev) + " of median)");
  const std::string limit = FormatPercent(100 * kHighSpreadRatio);
  std::string line = "high spread: " + FormatCount(static_cast<int64_t>(high.size())) + " of " +
                     FormatCount(measured) + " measured items have stdev or p20-p80 above " +
                     limit + " of their median";
  if (outliers_only)
    line += "; p20-p80 stays within " + limit + " on all of them, so a few outlier samples " +
            "inflate the stdev while the medians hold";
  out.push_back(line + "; worst: " + NameSome(worst));
}

// "node-a (12), node-b (4)": how many of the counted items each key has.
std::string CountsText(const std::map<std::string, int>& counts) {
  std::string text;
  for (const auto& [key, n] : counts) {
    text += (text.empty() ? "" : ", ") + key + " (" + std::to_string(n) + ")";
  }
  return text;
}

void CachedNotice(const core::Report& report, int measured, std::vector<std::string>& out) {
  int cached = 0;
  int64_t oldest_ms = 0;
  std::map<std::string, int> nodes;  // where the cached results were measured
  for (const auto& item : report.items) {
    if (!item.result || !item.cached) continue;
    ++cached;
    if (!item.measured_node.empty()) ++nodes[item.measured_node];
    if (item.measured_ms > 0 && (oldest_ms == 0 || item.measured_ms < oldest_ms))
      oldest_ms = item.measured_ms;
  }
  if (cached == 0) return;
  std::string line = "cached: " + std::to_string(cached) + " of " + std::to_string(measured) +
                     " results come from the result cache";
  if (!nodes.empty()) line += ", measured on " + CountsText(nodes);
  if (oldest_ms > 0) {
    line += ", the oldest measured " + FormatUtc(oldest_ms);
    if (report.job.created_ms > oldest_ms)
      line += " (" + FormatDuration(report.job.created_ms - oldest_ms) + " before this job)";
  }
  out.push_back(line + "; re-run with --force to measure again");
}

// A job spread over several GPUs of its model says which measured what.
void DevicesNotice(const core::Report& report, std::vector<std::string>& out) {
  std::map<std::string, int> gpus;
  for (const auto& item : report.items) {
    if (item.result && !item.cached && !item.device_uuid.empty()) ++gpus[item.device_uuid];
  }
  if (gpus.size() < 2) return;
  out.push_back("devices: measured on " + std::to_string(gpus.size()) + " GPUs of " +
                (report.job.device.name.empty() ? "one model" : report.job.device.name) +
                ", a measurement group on one GPU each: " + CountsText(gpus));
}

// Measurement notes, identical ones (the runner writes the same one on every item) once.
void NoteNotices(const core::Report& report, std::vector<std::string>& out) {
  std::vector<std::pair<std::string, std::vector<std::string>>> notes;
  for (const auto& item : report.items) {
    if (!item.result) continue;
    const std::string text = NotesBeyondThrottle(*item.result);
    if (text.empty()) continue;
    auto it =
        std::find_if(notes.begin(), notes.end(), [&](const auto& n) { return n.first == text; });
    if (it == notes.end()) it = notes.insert(notes.end(), {text, {}});
    it->second.push_back(ItemLabel(item));
  }
  std::vector<std::string> lines;
  for (const auto& [text, items] : notes)
    lines.push_back("note: " + text + " (" +
                    (items.size() == 1 ? items.front() : std::to_string(items.size()) + " items") +
                    ")");
  AppendCapped(lines, out);
}

void MeasurementNotices(const core::Report& report, std::vector<std::string>& out) {
  const int measured = static_cast<int>(
      std::count_if(report.items.begin(), report.items.end(),
                    [](const core::ItemRecord& item) { return item.result.has_value(); }));
  ThrottleNotices(report, measured, out);
  SpreadNotice(report, measured, out);
  CachedNotice(report, measured, out);
  DevicesNotice(report, out);
  NoteNotices(report, out);
}

// Interleaved rounds: results stored before them, items that hit the time budget short of
// the precision target, and shared measurements.
void RoundsNotices(const core::Report& report, std::vector<std::string>& out) {
  int old_items = 0, shared = 0;
  std::vector<std::string> budget;
  double worst = 0;
  std::string worst_label;
  const double target = report.job.spec.timing.precision_target;
  for (const auto& item : report.items) {
    if (item.status != core::ItemStatus::kDone || !item.result) continue;
    const core::Measurement& m = *item.result;
    if (!m.isolated.present()) {
      ++old_items;
      continue;
    }
    if (m.shared_with_item > 0) ++shared;
    const double w = m.isolated.RelHalfWidth();
    if (m.stop_reason.rfind("budget", 0) == 0 && w > target) {
      budget.push_back(ItemLabel(item));
      if (w > worst) {
        worst = w;
        worst_label = ItemLabel(item);
      }
    }
  }
  if (old_items > 0)
    out.push_back(std::to_string(old_items) + (old_items == 1 ? " item" : " items") +
                  " measured before paired rounds: no intervals, not ranked");
  if (!budget.empty())
    out.push_back("time budget spent before the " + FormatPlusMinus(target) + " target: " +
                  std::to_string(budget.size()) + " items, worst " + FormatPlusMinus(worst) + " (" +
                  worst_label + "); their intervals are wider, so fewer differences are called");
  if (shared > 0)
    out.push_back("shared measurements: " + std::to_string(shared) +
                  (shared == 1 ? " item is" : " items are") +
                  " the same GPU work as another item and measured once with it (\"=\" in the "
                  "tables)");
}

// Items whose energy was asked for and not measured, one line per reason.
void EnergyNotices(const core::Report& report, std::vector<std::string>& out) {
  std::map<std::string, int> reasons;
  for (const core::ItemRecord& item : report.items)
    if (item.result && !item.result->energy.not_measured.empty())
      ++reasons[item.result->energy.not_measured];
  for (const auto& [reason, count] : reasons)
    out.push_back("energy not measured for " + std::to_string(count) +
                  (count == 1 ? " item: " : " items: ") + reason);
}

}  // namespace

std::vector<std::string> BuildNotices(const Analysis& analysis) {
  const core::Report& report = analysis.report();
  std::vector<std::string> out;
  if (report.job.device.backend == "host-reference") out.push_back(kHostReferenceBanner);
  if (!core::IsTerminal(report.job.state))
    out.push_back("job is " + std::string(core::ToString(report.job.state)) + ": " +
                  std::to_string(analysis.PendingItems()) + " of " +
                  std::to_string(report.items.size()) +
                  " items still pending; totals of unfinished recipes are left out");
  if (!report.job.error.empty()) out.push_back("job error: " + report.job.error);
  StatusNotices(report, out);
  for (const Totals* t : analysis.AllTotals()) {
    if (t->bf16_fallbacks.empty()) continue;
    out.push_back(std::string(core::ToString(t->key.recipe)) + " " +
                  std::string(core::ToString(t->key.mode)) + " totals count " +
                  std::to_string(t->bf16_fallbacks.size()) +
                  " MoE router GEMMs it cannot take at their bf16 time (training keeps the "
                  "router in high precision): " +
                  NameSome(t->bf16_fallbacks));
  }
  // A variant splitting a recipe that shares quantized operands across passes: its
  // autocast total counts that quantization as the whole recipe's step does.
  if (report.job.spec.timing.accounting == core::Accounting::kTrainingStep) {
    for (const core::RecipeVariant& v : analysis.recipes()) {
      if (!analysis.FindTotals({v, core::Mode::kAutocast})) continue;
      if (const std::string note = core::SplitQuantizationNote(v); !note.empty())
        out.push_back(v.Name() + " autocast: " + note);
    }
  }
  // A variant naming fast accumulation that the job's --fast-accum already gives every
  // pass it runs: its figures are its base's.
  for (const core::RecipeVariant& v : analysis.recipes()) {
    if (!v.sets_fast_accum()) continue;
    if (core::OwnItemPasses(v, report.job.plan, report.job.spec.timing.fast_accum).empty()) {
      out.push_back(v.Name() + ": --fast-accum " +
                    std::string(core::ToString(report.job.spec.timing.fast_accum)) +
                    " already gives each of its passes that accumulation, so it runs the items "
                    "of the recipes its passes run and its figures are theirs");
    }
  }
  MeasurementNotices(report, out);
  RoundsNotices(report, out);
  if (std::string clocks = BatchClockNotice(Batches(report)); !clocks.empty())
    out.push_back(std::move(clocks));
  EnergyNotices(report, out);
  return out;
}

}  // namespace gemmprof::report
