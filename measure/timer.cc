#include "measure/timer.h"

#include <chrono>

namespace gemmprof::measure {

double SystemClock::NowS() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

int64_t SystemClock::UnixMs() const {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace gemmprof::measure
