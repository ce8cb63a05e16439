#include "core/daemon_record.h"

namespace gemmprof::core {

std::string_view ToString(DaemonState s) {
  switch (s) {
    case DaemonState::kServing:
      return "serving";
    case DaemonState::kStopped:
      return "stopped";
    case DaemonState::kLost:
      return "lost";
  }
  return "unknown";
}

DaemonState DaemonStateOf(const DaemonRecord& d, int64_t now_ms) {
  if (d.stopped) return DaemonState::kStopped;
  if (now_ms - d.heartbeat_unix_ms > kDaemonLostPeriods * kDaemonHeartbeatS * 1000) {
    return DaemonState::kLost;
  }
  return DaemonState::kServing;
}

}  // namespace gemmprof::core
