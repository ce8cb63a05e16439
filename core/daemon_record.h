// What a daemon says of itself in the store, so any client of the cluster can list every
// daemon that shares it (`gemmprof cluster`): its node, devices, how many are busy, its
// version, and a heartbeat renewed while it serves.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace gemmprof::core {

// Seconds between two heartbeats of a serving daemon.
inline constexpr int64_t kDaemonHeartbeatS = 10;
// A serving daemon whose heartbeat is older than this many periods reads as lost (its
// process or node died, or it lost the store).
inline constexpr int64_t kDaemonLostPeriods = 3;

struct DaemonDeviceModel {
  std::string name;  // e.g. "NVIDIA H200", or "host-reference (CPU: ...)"
  int32_t count = 0;
  int32_t unavailable = 0;  // of those, how many cannot run work now
};

struct DaemonRecord {
  std::string node;
  std::string version;  // gemmprof's
  std::string backend;  // cuda, host-reference
  std::vector<DaemonDeviceModel> models;
  int32_t devices = 0;
  int32_t busy = 0;  // devices running a batch at the last heartbeat
  int64_t started_unix_ms = 0;
  int64_t heartbeat_unix_ms = 0;
  bool stopped = false;  // a clean shutdown wrote this record last
};

// What `gemmprof cluster` shows: the records, and the answering daemon's clock.
struct DaemonListing {
  std::vector<DaemonRecord> daemons;
  int64_t now_unix_ms = 0;
};

enum class DaemonState { kServing, kStopped, kLost };

std::string_view ToString(DaemonState s);
// kStopped when it said so, kLost when its heartbeat is older than kDaemonLostPeriods
// periods at `now_ms`, kServing otherwise.
DaemonState DaemonStateOf(const DaemonRecord& d, int64_t now_ms);

}  // namespace gemmprof::core
