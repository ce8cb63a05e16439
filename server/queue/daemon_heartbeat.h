// This daemon's record in the store (core/daemon_record.h), so `gemmprof cluster` on any
// daemon sharing the store lists it: written at Start, every kDaemonHeartbeatS seconds
// while it serves (its busy devices as of then), and once more, stopped, at Stop. A write
// the store refuses is logged and tried again at the next heartbeat; it never stops the
// daemon.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "core/daemon_record.h"
#include "device/runner.h"
#include "server/storage/result_store.h"

namespace gemmprof::queue {

// The record of a daemon on `node` with `runners`: its devices by model (unavailable ones
// counted), backend and version; times and busy are the heartbeat's.
core::DaemonRecord DaemonRecordOf(const std::string& node,
                                  const std::vector<device::Runner*>& runners);

class DaemonHeartbeat {
 public:
  // `busy` and `now_ms` are called from the heartbeat thread.
  DaemonHeartbeat(storage::ResultStore& store, core::DaemonRecord record,
                  std::function<int32_t()> busy, std::function<int64_t()> now_ms);
  ~DaemonHeartbeat();
  DaemonHeartbeat(const DaemonHeartbeat&) = delete;
  DaemonHeartbeat& operator=(const DaemonHeartbeat&) = delete;

  // Writes the first record and starts the thread.
  void Start();
  // Stops the thread and writes the record once more with stopped set and nothing busy.
  void Stop();

 private:
  void Write(bool stopped);
  void Loop();

  storage::ResultStore& store_;
  core::DaemonRecord record_;
  std::function<int32_t()> busy_;
  std::function<int64_t()> now_ms_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  bool failing_ = false;  // the last write failed (logged once per streak)
  std::thread thread_;
};

}  // namespace gemmprof::queue
