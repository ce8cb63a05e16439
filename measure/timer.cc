#include "measure/timer.h"

#include <algorithm>
#include <chrono>

namespace gemmprof::measure {

double BusyMs(std::vector<std::pair<uint64_t, uint64_t>> intervals) {
  std::sort(intervals.begin(), intervals.end());
  uint64_t busy = 0, covered = 0;  // covered: the end of the union so far
  for (const auto& [start, end] : intervals) {
    if (end <= start || end <= covered) continue;  // empty, or inside the union already
    busy += end - std::max(start, covered);
    covered = end;
  }
  return static_cast<double>(busy) * 1e-6;
}

double SystemClock::NowS() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

int64_t SystemClock::UnixMs() const {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace gemmprof::measure
