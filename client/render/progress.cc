#include "client/render/progress.h"

#include <algorithm>

#include "client/render/format.h"

namespace gemmprof::client::render {
namespace {

std::string Counts(const core::JobRecord& job) {
  std::string s =
      std::to_string(job.finished_items) + "/" + std::to_string(job.total_items) + " items";
  if (job.failed_items > 0) s += ", " + std::to_string(job.failed_items) + " failed";
  return s;
}

std::string ItemText(const core::JobEvent& e) {
  if (!e.item) return "";
  std::string s = std::string(core::ToString(e.item->status)) + " " + ItemLabel(*e.item);
  if (e.item->result) s += " " + FormatMs(e.item->result->time.median_ms) + " ms";
  if (e.item->cached) s += " (cached)";
  if (!e.item->error.empty()) s += ": " + e.item->error;
  return s;
}

}  // namespace

std::string ProgressBarLine(const core::JobEvent& e) {
  const core::JobRecord& job = e.job;
  // Clamped: counters from a misbehaving server must not make the bar throw.
  const int filled =
      std::clamp(job.total_items > 0 ? kProgressBarWidth * job.finished_items / job.total_items : 0,
                 0, kProgressBarWidth);
  std::string line = "\r[" + std::string(static_cast<size_t>(filled), '#') +
                     std::string(static_cast<size_t>(kProgressBarWidth - filled), '.') + "] " +
                     Counts(job);
  if (e.kind == core::JobEvent::Kind::kJobFinished)
    return line + "  job " + std::string(core::ToString(job.state)) + "\033[K\n";
  if (e.item) line += "  " + ItemText(e);
  // Erase whatever a longer previous line left behind.
  return line + "\033[K";
}

std::string ProgressEventLine(const core::JobEvent& e) {
  std::string line = "job " + std::to_string(e.job.id) + " " +
                     std::string(core::ToString(e.job.state)) + ": " + Counts(e.job);
  if (e.item) line += "; " + ItemText(e);
  return line + "\n";
}

}  // namespace gemmprof::client::render
