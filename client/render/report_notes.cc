#include "client/render/report_notes.h"

#include <algorithm>
#include <cstdio>
#include <map>

#include "client/render/format.h"

namespace gemmprof::client::render {
namespace {

constexpr size_t kMaxLinesPerCategory = 8;

// Appends `lines` to `out`, keeping at most kMaxLinesPerCategory of them.
void AppendCapped(const std::vector<std::string>& lines, std::vector<std::string>& out) {
  for (size_t i = 0; i < lines.size() && i < kMaxLinesPerCategory; ++i) out.push_back(lines[i]);
  if (lines.size() > kMaxLinesPerCategory)
    out.push_back("... and " + std::to_string(lines.size() - kMaxLinesPerCategory) +
                  " more like this");
}

std::string Hex(uint64_t v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

std::string Sci(double v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.2e", v);
  return buf;
}

void StatusNotices(const core::Report& report, std::vector<std::string>& out) {
  std::vector<std::string> failed, wrong;
  std::map<core::Recipe, std::pair<int, std::string>> unsupported;
  int cancelled = 0;
  for (const auto& item : report.items) {
    if (item.status == core::ItemStatus::kFailed)
      failed.push_back("failed: " + ItemLabel(item) + ": " +
                       (item.error.empty() ? "no reason given" : item.error));
    if (item.status == core::ItemStatus::kCancelled) ++cancelled;
    if (item.status == core::ItemStatus::kNotSupported) {
      auto& [count, reason] = unsupported[item.item.recipe];
      ++count;
      if (reason.empty()) reason = item.error;
    }
    if (item.result && item.result->verification == core::Verification::kIncorrect)
      wrong.push_back("wrong results: " + ItemLabel(item) + " relative error " +
                      Sci(item.result->rel_error) + " > threshold " +
                      Sci(item.result->error_threshold) + "; its time is not comparable");
  }
  AppendCapped(failed, out);
  AppendCapped(wrong, out);
  for (const auto& [recipe, info] : unsupported)
    out.push_back("not supported: " + std::string(core::ToString(recipe)) + " (" +
                  std::to_string(info.first) +
                  " items): " + (info.second.empty() ? "no reason given" : info.second));
  if (cancelled > 0)
    out.push_back("cancelled: " + std::to_string(cancelled) + " items did not run");
}

void MeasurementNotices(const core::Report& report, std::vector<std::string>& out) {
  std::vector<std::string> throttled, spread;
  // Identical notes (the host runner writes the same one on every item) are shown once.
  std::vector<std::pair<std::string, std::vector<std::string>>> notes;
  int cached = 0, measured = 0;
  int64_t oldest_ms = 0;
  for (const auto& item : report.items) {
    if (!item.result) continue;
    const core::Measurement& m = *item.result;
    ++measured;
    if (m.telemetry.throttled_samples > 0)
      throttled.push_back(
          "throttled: " + ItemLabel(item) + ": " + std::to_string(m.telemetry.throttled_samples) +
          " of " + std::to_string(m.telemetry.telemetry_samples) +
          " telemetry samples throttled (reasons " + Hex(m.telemetry.throttle_reasons) + ")");
    if (m.time.median_ms > 0 && m.time.stdev_ms / m.time.median_ms > kHighSpreadRatio)
      spread.push_back("high spread: " + ItemLabel(item) + ": stdev/median " +
                       FormatPercent(100.0 * m.time.stdev_ms / m.time.median_ms) + " over " +
                       std::to_string(m.time.count) + " samples");
    if (!m.notes.empty()) {
      auto it = std::find_if(notes.begin(), notes.end(),
                             [&](const auto& n) { return n.first == m.notes; });
      if (it == notes.end()) it = notes.insert(notes.end(), {m.notes, {}});
      it->second.push_back(ItemLabel(item));
    }
    if (item.cached) {
      ++cached;
      if (item.measured_ms > 0 && (oldest_ms == 0 || item.measured_ms < oldest_ms))
        oldest_ms = item.measured_ms;
    }
  }
  AppendCapped(throttled, out);
  AppendCapped(spread, out);
  if (cached > 0) {
    std::string line = "cached: " + std::to_string(cached) + " of " + std::to_string(measured) +
                       " results come from the result cache";
    if (oldest_ms > 0) {
      line += ", the oldest measured " + FormatUtc(oldest_ms);
      if (report.job.created_ms > oldest_ms)
        line += " (" + FormatDuration(report.job.created_ms - oldest_ms) + " before this job)";
    }
    out.push_back(line + "; re-run with --force to measure again");
  }
  std::vector<std::string> note_lines;
  for (const auto& [text, items] : notes)
    note_lines.push_back(
        "note: " + text + " (" +
        (items.size() == 1 ? items.front() : std::to_string(items.size()) + " items") + ")");
  AppendCapped(note_lines, out);
}

}  // namespace

std::vector<std::string> BuildNotices(const ReportAnalysis& analysis) {
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
  MeasurementNotices(report, out);
  return out;
}

}  // namespace gemmprof::client::render
