#include "report/batches.h"

#include <algorithm>
#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace gemmprof::report {
namespace {

// The batch an item's measurement belongs to.
const std::string& BatchKey(const core::Measurement& m) {
  return m.batch_id.empty() ? m.group_uid : m.batch_id;
}

double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

}  // namespace

std::vector<BatchState> Batches(const core::Report& report) {
  std::vector<const core::ItemRecord*> sorted;
  for (const core::ItemRecord& item : report.items)
    if (item.result && !BatchKey(*item.result).empty()) sorted.push_back(&item);
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](auto* a, auto* b) { return a->item.seq < b->item.seq; });
  std::vector<BatchState> batches;
  std::map<std::string, size_t> index;
  std::vector<std::vector<double>> power, clock;
  for (const core::ItemRecord* item : sorted) {
    const core::Measurement& m = *item->result;
    auto [it, added] = index.try_emplace(BatchKey(m), batches.size());
    if (added) {
      BatchState& b = batches.emplace_back();
      b.number = static_cast<int>(batches.size());
      b.uid = BatchKey(m);
      b.context = m.context;
      b.gemms = m.batch_gemms;
      power.emplace_back();
      clock.emplace_back();
    }
    BatchState& b = batches[it->second];
    ++b.items;
    b.cached = b.cached || item->cached;
    const core::Telemetry& t = m.telemetry;
    if (t.telemetry_samples <= 0) continue;
    power[it->second].push_back(t.power_w_avg);
    clock[it->second].push_back(t.sm_clock_mhz_mean > 0
                                    ? t.sm_clock_mhz_mean
                                    : (t.sm_clock_mhz_min + t.sm_clock_mhz_max) / 2);
    b.sm_mhz_min =
        b.sm_mhz_max > 0 ? std::min(b.sm_mhz_min, t.sm_clock_mhz_min) : t.sm_clock_mhz_min;
    b.sm_mhz_max = std::max(b.sm_mhz_max, t.sm_clock_mhz_max);
    b.temp_c_max = std::max(b.temp_c_max, t.temp_c_max);
  }
  for (size_t i = 0; i < batches.size(); ++i) {
    batches[i].power_w = Median(power[i]);
    batches[i].sm_mhz_mean = Median(clock[i]);
  }
  return batches;
}

const BatchState* BatchOf(const std::vector<BatchState>& batches, const core::ItemRecord& item) {
  if (!item.result || BatchKey(*item.result).empty()) return nullptr;
  for (const BatchState& b : batches)
    if (b.uid == BatchKey(*item.result)) return &b;
  return nullptr;
}

std::string DescribeBatch(const BatchState& b) {
  std::string s = b.context.empty() ? "context not recorded" : b.context;
  if (!b.gemms.empty()) absl::StrAppend(&s, " (", b.gemms, ")");
  absl::StrAppend(&s, ": ", b.items, b.items == 1 ? " item" : " items", b.cached ? ", cached" : "");
  if (!b.has_telemetry()) return s + ", power and clocks not recorded";
  absl::StrAppend(&s, absl::StrFormat(", %.0f W, SM %.0f-%.0f MHz (mean %.0f), %.0f C", b.power_w,
                                      b.sm_mhz_min, b.sm_mhz_max, b.sm_mhz_mean, b.temp_c_max));
  return s;
}

std::string BatchClockNotice(const std::vector<BatchState>& batches) {
  const BatchState* slow = nullptr;
  const BatchState* fast = nullptr;
  for (const BatchState& b : batches) {
    if (!b.has_telemetry() || b.sm_mhz_mean <= 0) continue;
    if (!slow || b.sm_mhz_mean < slow->sm_mhz_mean) slow = &b;
    if (!fast || b.sm_mhz_mean > fast->sm_mhz_mean) fast = &b;
  }
  if (!slow || fast->sm_mhz_mean <= slow->sm_mhz_mean * (1 + kBatchClockSpread)) return "";
  const auto name = [](const BatchState& b) {
    return absl::StrFormat("batch %d (%s) at %.0f MHz, %.0f W", b.number,
                           b.context.empty() ? "context not recorded" : b.context, b.sm_mhz_mean,
                           b.power_w);
  };
  return absl::StrFormat(
      "GEMMs of this report ran in power states %.0f%% apart in SM clock: %s, %s; each batch "
      "ran as its context says (see the batches in the context section)",
      100 * (fast->sm_mhz_mean / slow->sm_mhz_mean - 1), name(*fast), name(*slow));
}

}  // namespace gemmprof::report
