#include "server/queue/daemon_heartbeat.h"

#include <spdlog/spdlog.h>

#include <chrono>
#include <string>
#include <utility>

namespace gemmprof::queue {

core::DaemonRecord DaemonRecordOf(const std::string& node,
                                  const std::vector<device::Runner*>& runners) {
  core::DaemonRecord d;
  d.node = node;
  d.version = GEMMPROF_VERSION;
  d.devices = static_cast<int32_t>(runners.size());
  for (const device::Runner* r : runners) {
    const core::DeviceInfo& info = r->Info();
    if (d.backend.empty()) d.backend = info.backend;
    core::DaemonDeviceModel* model = nullptr;
    for (core::DaemonDeviceModel& m : d.models) {
      if (m.name == info.name) model = &m;
    }
    if (model == nullptr) model = &d.models.emplace_back(core::DaemonDeviceModel{info.name});
    ++model->count;
    if (!r->Availability().ok()) ++model->unavailable;
  }
  return d;
}

DaemonHeartbeat::DaemonHeartbeat(storage::ResultStore& store, core::DaemonRecord record,
                                 std::function<int32_t()> busy, std::function<int64_t()> now_ms)
    : store_(store),
      record_(std::move(record)),
      busy_(std::move(busy)),
      now_ms_(std::move(now_ms)) {}

DaemonHeartbeat::~DaemonHeartbeat() { Stop(); }

void DaemonHeartbeat::Start() {
  record_.started_unix_ms = now_ms_();
  Write(false);
  thread_ = std::thread([this] { Loop(); });
}

void DaemonHeartbeat::Stop() {
  {
    std::lock_guard lock(mu_);
    if (stop_) return;
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
  if (record_.started_unix_ms > 0) Write(true);
}

void DaemonHeartbeat::Write(bool stopped) {
  core::DaemonRecord r = record_;
  r.stopped = stopped;
  r.busy = stopped ? 0 : busy_();
  r.heartbeat_unix_ms = now_ms_();
  const absl::Status status = store_.PutDaemon(r);
  if (!status.ok() && !failing_) {
    spdlog::warn(
        "daemon record: the store refused it ({}); `gemmprof cluster` shows this node "
        "as lost until a heartbeat gets through",
        status.ToString());
  } else if (status.ok() && failing_) {
    spdlog::info("daemon record: written again");
  }
  failing_ = !status.ok();
}

void DaemonHeartbeat::Loop() {
  std::unique_lock lock(mu_);
  while (!cv_.wait_for(lock, std::chrono::seconds(core::kDaemonHeartbeatS),
                       [this] { return stop_; })) {
    lock.unlock();
    Write(false);
    lock.lock();
  }
}

}  // namespace gemmprof::queue
