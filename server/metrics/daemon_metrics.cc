#include "server/metrics/daemon_metrics.h"

#include <chrono>
#include <utility>

#include "core/enums.h"

namespace gemmprof::metrics {
namespace {

double SteadySeconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

Labels DeviceLabels(int index, const std::string& uuid, const std::string& name) {
  return {{"device", std::to_string(index)}, {"uuid", uuid}, {"name", name}};
}

MetricFamily Family(std::string name, std::string help, MetricType type) {
  return {std::move(name), std::move(help), type, {}};
}

}  // namespace

DaemonMetrics::DaemonMetrics(queue::JobEventBus& bus, MetricSources sources)
    : bus_(bus), sources_(std::move(sources)), item_duration_(ItemDurationBuckets()) {
  if (!sources_.now_s) sources_.now_s = SteadySeconds;
  // Every series exists from the first scrape, so rate() and alerts see 0, not absence.
  for (core::JobState s : {core::JobState::kSucceeded, core::JobState::kPartial,
                           core::JobState::kFailed, core::JobState::kCancelled}) {
    jobs_finished_[std::string(core::ToString(s))] = 0;
  }
  for (core::ItemStatus s :
       {core::ItemStatus::kDone, core::ItemStatus::kFailed, core::ItemStatus::kNotSupported}) {
    items_finished_[std::string(core::ToString(s))] = 0;
  }
  token_ = bus_.SubscribeAll([this](const queue::JobEvent& e) { OnEvent(e); });
}

DaemonMetrics::~DaemonMetrics() { bus_.Unsubscribe(token_); }

void DaemonMetrics::OnEvent(const queue::JobEvent& event) {
  using Kind = queue::JobEvent::Kind;
  const double now = sources_.now_s();
  std::lock_guard lock(mu_);
  switch (event.kind) {
    case Kind::kSnapshot:
      return;
    case Kind::kJobFinished:
      ++jobs_finished_[std::string(core::ToString(event.job.state))];
      // Items that started but whose end was never recorded (a store failure) end here.
      std::erase_if(started_s_, [&](const auto& e) { return e.second.job_id == event.job.id; });
      return;
    case Kind::kItemStarted:
      if (event.item.has_value()) started_s_[event.item->item.id] = {event.job.id, now};
      return;
    case Kind::kItemFinished:
    case Kind::kItemFailed:
      break;
  }
  if (!event.item.has_value()) return;
  const core::ItemRecord& item = *event.item;
  ++items_finished_[std::string(core::ToString(item.status))];
  if (item.cached) ++cache_hits_;
  // An energy window is counted once: not for a cache hit, nor for an item that shares
  // another's measurement.
  if (!item.cached && item.result && item.result->energy.present() &&
      item.result->shared_with_item == 0) {
    ++energy_windows_;
    energy_joules_ += item.result->energy.power_w * item.result->energy.window_s;
  }
  // Cache hits never start: only measured items have a duration.
  if (auto it = started_s_.find(item.item.id); it != started_s_.end()) {
    item_duration_.Observe(now - it->second.at_s);
    started_s_.erase(it);
  }
}

void DaemonMetrics::AppendJobFamilies(std::vector<MetricFamily>& out) const {
  if (sources_.queue_counts) {
    const queue::QueueCounts counts = sources_.queue_counts();
    MetricFamily depth = Family("gemmprof_queue_depth", "Jobs of this daemon waiting for a worker.",
                                MetricType::kGauge);
    depth.samples.push_back({"", {}, static_cast<double>(counts.queued)});
    out.push_back(std::move(depth));
    MetricFamily jobs =
        Family("gemmprof_jobs", "Jobs of this daemon by live state (queued, running).",
               MetricType::kGauge);
    jobs.samples.push_back({"", {{"state", "queued"}}, static_cast<double>(counts.queued)});
    jobs.samples.push_back({"", {{"state", "running"}}, static_cast<double>(counts.running)});
    out.push_back(std::move(jobs));
  }
  std::lock_guard lock(mu_);
  MetricFamily ended =
      Family("gemmprof_jobs_finished_total",
             "Jobs that ended since the daemon started, by final state.", MetricType::kCounter);
  for (const auto& [state, n] : jobs_finished_) {
    ended.samples.push_back({"", {{"state", state}}, static_cast<double>(n)});
  }
  out.push_back(std::move(ended));
  MetricFamily running =
      Family("gemmprof_items_running", "Items a worker measures now.", MetricType::kGauge);
  running.samples.push_back({"", {}, static_cast<double>(started_s_.size())});
  out.push_back(std::move(running));
  MetricFamily items = Family("gemmprof_items_finished_total",
                              "Items that ended since the daemon started, by final status "
                              "(cache hits included).",
                              MetricType::kCounter);
  for (const auto& [state, n] : items_finished_) {
    items.samples.push_back({"", {{"state", state}}, static_cast<double>(n)});
  }
  out.push_back(std::move(items));
  MetricFamily duration = Family("gemmprof_item_duration_seconds",
                                 "Wall time of measured items (a measurement group's time, for "
                                 "each of its members); cache hits are not measured.",
                                 MetricType::kHistogram);
  item_duration_.AppendTo(duration);
  out.push_back(std::move(duration));
  MetricFamily hits = Family("gemmprof_cache_hits_total",
                             "Items answered from the result cache since the daemon started.",
                             MetricType::kCounter);
  hits.samples.push_back({"", {}, static_cast<double>(cache_hits_)});
  out.push_back(std::move(hits));
  MetricFamily windows = Family("gemmprof_energy_windows_total",
                                "Energy windows measured (submit --energy), one per distinct "
                                "measurement, since the daemon started.",
                                MetricType::kCounter);
  windows.samples.push_back({"", {}, static_cast<double>(energy_windows_)});
  out.push_back(std::move(windows));
  MetricFamily joules = Family("gemmprof_energy_measured_joules_total",
                               "Board energy the GPUs' energy counters read over those windows.",
                               MetricType::kCounter);
  joules.samples.push_back({"", {}, energy_joules_});
  out.push_back(std::move(joules));
}

void DaemonMetrics::AppendDeviceFamilies(std::vector<MetricFamily>& out) const {
  if (sources_.devices) {
    MetricFamily busy = Family("gemmprof_device_busy_seconds_total",
                               "Seconds the device's worker spent on jobs; rate() is the busy "
                               "fraction.",
                               MetricType::kCounter);
    MetricFamily restarts =
        Family("gemmprof_worker_restarts_total",
               "Times the device's worker process ended and was restarted.", MetricType::kCounter);
    MetricFamily hangs = Family("gemmprof_worker_hangs_total",
                                "Measurements on the device that made no progress within their "
                                "bound: the worker was killed (docs/measurement.md \"Faults\").",
                                MetricType::kCounter);
    MetricFamily retries =
        Family("gemmprof_batch_retries_total",
               "Batches, or parts of one, measured again after a worker fault on the device.",
               MetricType::kCounter);
    for (const DeviceCounters& d : sources_.devices()) {
      const auto labels = DeviceLabels(d.index, d.uuid, d.name);
      busy.samples.push_back({"", labels, d.busy_seconds});
      restarts.samples.push_back({"", labels, static_cast<double>(d.restarts)});
      hangs.samples.push_back({"", labels, static_cast<double>(d.hangs)});
      retries.samples.push_back({"", labels, static_cast<double>(d.retries)});
    }
    out.push_back(std::move(busy));
    out.push_back(std::move(restarts));
    out.push_back(std::move(hangs));
    out.push_back(std::move(retries));
  }
  if (sources_.telemetry == nullptr) return;
  MetricFamily clock =
      Family("gemmprof_device_sm_clock_hertz", "SM clock now (NVML).", MetricType::kGauge);
  MetricFamily power =
      Family("gemmprof_device_power_watts", "Power draw now (NVML).", MetricType::kGauge);
  MetricFamily temp = Family("gemmprof_device_temperature_celsius", "GPU temperature now (NVML).",
                             MetricType::kGauge);
  for (const device::DeviceReading& r : sources_.telemetry->Read()) {
    const Labels labels = DeviceLabels(r.index, r.uuid, r.name);
    if (r.sm_clock_hz) clock.samples.push_back({"", labels, *r.sm_clock_hz});
    if (r.power_w) power.samples.push_back({"", labels, *r.power_w});
    if (r.temperature_c) temp.samples.push_back({"", labels, *r.temperature_c});
  }
  out.push_back(std::move(clock));
  out.push_back(std::move(power));
  out.push_back(std::move(temp));
}

void DaemonMetrics::AppendClusterFamilies(std::vector<MetricFamily>& out) const {
  if (!sources_.cluster) return;
  const queue::ClusterStats stats = sources_.cluster();
  MetricFamily batches =
      Family("gemmprof_cluster_batches_total",
             "Batches of the cluster queue this daemon claimed (claimed), of those the ones "
             "whose previous holder's lease had lapsed (rerun), measured to their end "
             "(finished), gave back unmeasured (released), and lost to a lapsed lease (lost).",
             MetricType::kCounter);
  for (const auto& [event, n] : {std::pair<const char*, int64_t>{"claimed", stats.claimed},
                                 {"rerun", stats.rerun},
                                 {"finished", stats.finished},
                                 {"released", stats.released},
                                 {"lost", stats.lost}}) {
    batches.samples.push_back({"", {{"event", event}}, static_cast<double>(n)});
  }
  out.push_back(std::move(batches));
  if (!stats.queue.has_value()) return;
  MetricFamily queue = Family("gemmprof_cluster_queue_batches",
                              "Batches of the cluster queue now, every node's: queued, leased "
                              "(under a live lease), expired (the lease lapsed, not claimed "
                              "again yet).",
                              MetricType::kGauge);
  queue.samples.push_back({"", {{"state", "queued"}}, static_cast<double>(stats.queue->queued)});
  queue.samples.push_back({"", {{"state", "leased"}}, static_cast<double>(stats.queue->leased)});
  queue.samples.push_back({"", {{"state", "expired"}}, static_cast<double>(stats.queue->expired)});
  out.push_back(std::move(queue));
}

std::string DaemonMetrics::Render() const {
  std::vector<MetricFamily> families;
  MetricFamily info =
      Family("gemmprof_build_info", "The gemmprofd version; always 1.", MetricType::kGauge);
  info.samples.push_back({"", {{"version", GEMMPROF_VERSION}}, 1});
  families.push_back(std::move(info));
  AppendJobFamilies(families);
  AppendDeviceFamilies(families);
  AppendClusterFamilies(families);
  return RenderText(families);
}

}  // namespace gemmprof::metrics
