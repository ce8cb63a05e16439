// The batches a job's items were measured in (docs/measurement.md "Contexts"): each batch
// (one batch_id; for results stored before contexts, one group_uid), its measurement
// context, the GEMMs it held and the power state it ran in. Pure.
#pragma once

#include <string>
#include <vector>

#include "core/job.h"

namespace gemmprof::report {

// One batch as its items recorded it. Power and clocks are over the batch's items with
// telemetry (zeros when none has any: the host runner, results stored before).
struct BatchState {
  int number = 0;          // 1, 2, ... in order of the batch's first item
  std::string uid;         // the items' batch_id (group_uid for results stored before)
  std::string context;     // "workload: m=16"; empty for results stored before contexts
  std::string gemms;       // the GEMMs the batch held, as recorded
  int items = 0;           // items of this job measured in it
  bool cached = false;     // its items were answered from the result cache
  double power_w = 0;      // median of the items' mean board power
  double sm_mhz_min = 0;   // lowest SM clock sampled
  double sm_mhz_max = 0;   // highest SM clock sampled
  double sm_mhz_mean = 0;  // median of the items' mean SM clock (min-max midpoint before)
  double temp_c_max = 0;
  bool has_telemetry() const { return sm_mhz_max > 0; }
};

// The batches of a report's done items, in order of their first item (by seq). Items
// with neither a batch_id nor a group_uid (results stored before rounds) are left out.
std::vector<BatchState> Batches(const core::Report& report);

// The batch of an item, or nullptr (not done, or in no batch).
const BatchState* BatchOf(const std::vector<BatchState>& batches, const core::ItemRecord& item);

// SM clocks of the batches more than this far apart (max / min - 1 of their mean clocks)
// make a notice: the GEMMs of one table ran in different power states.
inline constexpr double kBatchClockSpread = 0.05;

// "workload: m=16 (16x4096x14336, 16x14336x4096): 6 items, 612 W, SM 1920-1980 MHz
// (mean 1950), 51 C" (the batch's number is the caller's label).
std::string DescribeBatch(const BatchState& batch);

// The notice where batches ran more than kBatchClockSpread apart in mean SM clock (the
// slowest and the fastest named), or empty.
std::string BatchClockNotice(const std::vector<BatchState>& batches);

}  // namespace gemmprof::report
