#include "server/queue/job_share.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "core/group.h"

namespace gemmprof::queue {

bool DeviceScope::Admits(int index, const core::DeviceInfo& info) const {
  if (ModelOf(info) != model) return false;
  return allowed.empty() || std::find(allowed.begin(), allowed.end(), index) != allowed.end();
}

std::string ModelOf(const core::DeviceInfo& info) {
  return absl::StrCat(info.backend, " ", info.name, " sm", info.sm);
}

namespace {

double Work(const std::vector<core::ItemRecord>& items, const std::vector<size_t>& group) {
  double work = 0;
  for (size_t i : group) work += items[i].item.op.Flops();
  return work;
}

}  // namespace

void OrderLargestFirst(const std::vector<core::ItemRecord>& items,
                       std::vector<std::vector<size_t>>& groups) {
  std::stable_sort(groups.begin(), groups.end(),
                   [&](const auto& a, const auto& b) { return Work(items, a) > Work(items, b); });
}

std::vector<std::vector<size_t>> PackBatches(const std::vector<core::ItemRecord>& items,
                                             std::vector<std::vector<size_t>> groups, int devices,
                                             size_t batch_groups) {
  if (groups.empty()) return {};
  batch_groups = std::max<size_t>(batch_groups, 1);
  const size_t wanted =
      std::max<size_t>(std::max(devices, 1), (groups.size() + batch_groups - 1) / batch_groups);
  const size_t count = std::min(wanted, groups.size());
  OrderLargestFirst(items, groups);
  std::vector<std::vector<size_t>> batches(count);
  std::vector<double> work(count, 0);
  std::vector<size_t> groups_in(count, 0);
  for (const std::vector<size_t>& group : groups) {
    size_t best = count;
    for (size_t b = 0; b < count; ++b) {
      if (groups_in[b] >= batch_groups) continue;
      if (best == count || work[b] < work[best]) best = b;
    }
    batches[best].insert(batches[best].end(), group.begin(), group.end());
    work[best] += Work(items, group);
    ++groups_in[best];
  }
  OrderLargestFirst(items, batches);
  return batches;
}

std::vector<std::vector<size_t>> PackJobBatches(const core::JobSpec& spec,
                                                const std::vector<core::ItemRecord>& items,
                                                const std::vector<std::vector<size_t>>& groups,
                                                int devices, size_t batch_groups) {
  std::vector<std::string> contexts;  // in order of first occurrence
  std::vector<std::vector<std::vector<size_t>>> parts;
  for (const std::vector<size_t>& group : groups) {
    if (group.empty()) continue;
    const std::string context = core::ContextOf(spec, items[group.front()].item.op);
    const auto at = std::find(contexts.begin(), contexts.end(), context);
    if (at == contexts.end()) {
      contexts.push_back(context);
      parts.push_back({group});
    } else {
      parts[at - contexts.begin()].push_back(group);
    }
  }
  const bool isolated = spec.timing.context == core::MeasureContext::kIsolated;
  // Several contexts already give the devices of a spread job separate batches.
  const int per_part_devices =
      parts.size() >= static_cast<size_t>(std::max(devices, 1)) ? 1 : devices;
  std::vector<std::vector<size_t>> batches;
  for (std::vector<std::vector<size_t>>& part : parts) {
    for (std::vector<size_t>& batch :
         PackBatches(items, std::move(part), per_part_devices, isolated ? 1 : batch_groups))
      batches.push_back(std::move(batch));
  }
  OrderLargestFirst(items, batches);
  return batches;
}

JobShare::JobShare(core::JobRecord job, std::vector<core::ItemRecord> items,
                   std::vector<std::vector<size_t>> groups, DeviceScope scope)
    : job_(std::move(job)),
      items_(std::move(items)),
      groups_(std::move(groups)),
      scope_(std::move(scope)) {}

std::optional<size_t> JobShare::Take() {
  std::lock_guard lock(mu_);
  if (closed_) return std::nullopt;
  std::optional<size_t> g;
  if (!returned_.empty()) {
    g = returned_.back();
    returned_.pop_back();
  } else if (next_ < groups_.size()) {
    g = next_++;
  }
  if (g.has_value()) ++in_flight_;
  return g;
}

void JobShare::Done() {
  std::lock_guard lock(mu_);
  --in_flight_;
  idle_.notify_all();
}

void JobShare::Return(size_t g) {
  std::lock_guard lock(mu_);
  returned_.push_back(g);
  --in_flight_;
  idle_.notify_all();
}

void JobShare::Close(const std::string& why) {
  std::lock_guard lock(mu_);
  closed_ = true;
  if (failure_.empty()) failure_ = why;
}

void JobShare::WaitIdle() {
  std::unique_lock lock(mu_);
  idle_.wait(lock, [this] { return in_flight_ == 0; });
}

bool JobShare::HasWork() const {
  std::lock_guard lock(mu_);
  return !closed_ && (!returned_.empty() || next_ < groups_.size());
}

std::string JobShare::failure() const {
  std::lock_guard lock(mu_);
  return failure_;
}

void JobShare::MarkFinished(int64_t item_id) {
  std::lock_guard lock(mu_);
  finished_ids_.insert(item_id);
}

bool JobShare::IsFinished(int64_t item_id) const {
  std::lock_guard lock(mu_);
  return finished_ids_.contains(item_id);
}

bool JobShare::IsLastPending(const std::vector<size_t>& group, size_t i) const {
  std::lock_guard lock(mu_);
  auto pending = [&](size_t j) {
    return !core::IsFinal(items_[j].status) && !finished_ids_.contains(items_[j].item.id);
  };
  const auto at = std::find(group.begin(), group.end(), i);
  for (auto it = at == group.end() ? at : at + 1; it != group.end(); ++it) {
    if (pending(*it)) return false;
  }
  for (size_t j = 0; j < items_.size(); ++j) {
    if (pending(j) && std::find(group.begin(), group.end(), j) == group.end()) return false;
  }
  return true;
}

}  // namespace gemmprof::queue
