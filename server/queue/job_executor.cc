#include "server/queue/job_executor.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <thread>

#include "absl/strings/str_cat.h"
#include "core/cache_key.h"
#include "core/error_detail.h"
#include "core/group.h"
#include "server/queue/job_queue.h"

namespace gemmprof::queue {
namespace {

const absl::Status& StatusOf(const absl::Status& s) { return s; }
template <typename T>
const absl::Status& StatusOf(const absl::StatusOr<T>& s) {
  return s.status();
}

}  // namespace

template <typename Call>
auto JobExecutor::WithStoreRetry(int64_t job_id, const Call& call) -> decltype(call()) {
  auto result = call();
  if (!absl::IsUnavailable(StatusOf(result))) return result;
  spdlog::warn("job {}: the result store is unavailable ({}); retrying for up to {} s", job_id,
               std::string(StatusOf(result).message()), kStoreRetrySeconds);
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::duration<double>(kStoreRetrySeconds);
  auto delay = std::chrono::milliseconds(200);
  while (absl::IsUnavailable(StatusOf(result)) && std::chrono::steady_clock::now() < deadline &&
         interrupt_(job_id) != Interrupt::kStop) {
    std::this_thread::sleep_for(delay);
    delay = std::min(delay * 2, std::chrono::milliseconds(5000));
    result = call();
  }
  if (StatusOf(result).ok()) spdlog::info("job {}: the result store is back", job_id);
  return result;
}

JobExecutor::JobExecutor(storage::ResultStore& store, JobEventBus& bus, device::Runner& runner,
                         std::function<Interrupt(int64_t)> interrupt, ShareHooks hooks)
    : store_(store),
      bus_(bus),
      runner_(runner),
      interrupt_(std::move(interrupt)),
      hooks_(std::move(hooks)) {}

RunEnd JobExecutor::Run(int64_t job_id) {
  auto job = store_.GetJob(job_id);
  if (!job.ok()) {
    spdlog::error("job {}: cannot load: {}", job_id, job.status().ToString());
    return RunEnd::kEnded;
  }
  if (core::IsTerminal(job->state)) return RunEnd::kEnded;
  if (!runner_.Availability().ok()) return RunEnd::kDeviceLost;
  if (auto s = store_.SetJobState(job_id, core::JobState::kRunning, ""); !s.ok()) {
    spdlog::error("job {}: cannot mark running: {}", job_id, s.ToString());
    return RunEnd::kEnded;
  }
  // On a node of several GPUs any worker may take the job: record the one that does.
  if (auto s = store_.SetJobDevice(job_id, runner_.Info()); !s.ok()) {
    spdlog::error("job {}: cannot record its device: {}", job_id, s.ToString());
  }
  spdlog::info("job {}: running {} items on {} ({})", job_id, job->total_items, runner_.Info().name,
               runner_.Info().backend);
  auto items = store_.GetItems(job_id);
  if (!items.ok()) {
    EndJob(job_id, core::JobState::kFailed,
           absl::StrCat("cannot load items: ", items.status().message()));
    return RunEnd::kEnded;
  }
  std::vector<core::WorkItem> pending;
  std::vector<size_t> index;  // pending[i] is (*items)[index[i]]
  for (size_t i = 0; i < items->size(); ++i) {
    if (core::IsFinal((*items)[i].status)) continue;
    pending.push_back((*items)[i].item);
    index.push_back(i);
  }
  std::vector<std::vector<size_t>> groups;
  for (const std::vector<size_t>& members : core::GroupItems(pending)) {
    std::vector<size_t>& group = groups.emplace_back();
    for (size_t m : members) group.push_back(index[m]);
  }
  DeviceScope scope{ModelOf(runner_.Info()), job->spec.devices};
  std::vector<std::vector<size_t>> batches = PackJobBatches(
      job->spec, *items, groups, hooks_.devices ? hooks_.devices(scope) : 1, hooks_.batch_groups);
  auto share =
      std::make_shared<JobShare>(*job, *std::move(items), std::move(batches), std::move(scope));
  // Published before the lead's own warm-up, so idle devices warm up alongside it.
  if (hooks_.publish) hooks_.publish(share);
  if (auto s = WarmUp(*job); !s.ok()) {
    // Helpers finish the groups they hold; the lead's failure decides the job.
    share->Close();
    share->WaitIdle();
    if (hooks_.withdraw) hooks_.withdraw(job_id);
    if (!runner_.Availability().ok()) return RunEnd::kDeviceLost;
    if (const std::string source = core::SourceOf(s); !source.empty()) {
      spdlog::warn("job {}: device warm-up failed at {}", job_id, source);
    }
    EndJob(job_id, core::JobState::kFailed, absl::StrCat("device warm-up failed: ", s.message()));
    return RunEnd::kEnded;
  }
  LoopEnd end = RunGroups(*share);
  // A helper whose device went away hands its group back: the lead runs it.
  while (end == LoopEnd::kDone) {
    share->WaitIdle();
    if (!share->HasWork()) break;
    end = RunGroups(*share);
  }
  // Helpers finish the groups they hold before the job ends (or goes elsewhere).
  share->Close();
  share->WaitIdle();
  if (hooks_.withdraw) hooks_.withdraw(job_id);
  switch (end) {
    case LoopEnd::kStop:
      spdlog::info("job {}: stopping at a batch boundary; it resumes on restart", job_id);
      return RunEnd::kStopped;
    case LoopEnd::kCancel:
      if (auto s = WithStoreRetry(job_id, [&] { return store_.CancelPendingItems(job_id); });
          !s.ok())
        spdlog::error("job {}: cancel items: {}", job_id, s.ToString());
      EndJob(job_id, core::JobState::kCancelled, "cancelled by request");
      return RunEnd::kEnded;
    case LoopEnd::kDeviceLost:
      return RunEnd::kDeviceLost;
    case LoopEnd::kDone:
      break;
  }
  if (const std::string failure = share->failure(); !failure.empty()) {
    EndJob(job_id, core::JobState::kFailed, failure);
  } else {
    EndRanToTheEnd(job_id);
  }
  return RunEnd::kEnded;
}

void JobExecutor::Help(JobShare& share) {
  const int64_t job_id = share.job().id;
  if (!runner_.Availability().ok()) return;
  if (auto s = WarmUp(share.job()); !s.ok()) {
    spdlog::warn("job {}: {} does not help: its warm-up failed: {}", job_id, runner_.Info().uuid,
                 std::string(s.message()));
    return;
  }
  spdlog::info("job {}: {} ({}) helps with its groups", job_id, runner_.Info().name,
               runner_.Info().uuid);
  RunGroups(share);
}

JobExecutor::BatchEnd JobExecutor::RunBatch(int64_t job_id, const std::vector<int64_t>& item_ids,
                                            std::string* why) {
  // A GPU that ended a batch of this job this recently needs no second warm-up.
  constexpr auto kStillWarm = std::chrono::seconds(2);
  auto job = store_.GetJob(job_id);
  if (!job.ok()) {
    *why = absl::StrCat("cannot load job ", job_id, ": ", job.status().message());
    return BatchEnd::kFailed;
  }
  auto items = store_.GetItems(job_id);
  if (!items.ok()) {
    *why = absl::StrCat("cannot load the items of job ", job_id, ": ", items.status().message());
    return BatchEnd::kFailed;
  }
  std::vector<size_t> batch;
  for (size_t i = 0; i < items->size(); ++i) {
    const core::ItemRecord& record = (*items)[i];
    if (!core::IsFinal(record.status) &&
        std::find(item_ids.begin(), item_ids.end(), record.item.id) != item_ids.end()) {
      batch.push_back(i);
    }
  }
  if (!runner_.Availability().ok()) return BatchEnd::kDeviceLost;
  auto share = std::make_shared<JobShare>(*job, *std::move(items),
                                          std::vector<std::vector<size_t>>{std::move(batch)},
                                          DeviceScope{ModelOf(runner_.Info()), {}});
  const bool warm =
      warm_job_ == job_id && std::chrono::steady_clock::now() - warm_since_ < kStillWarm;
  if (!warm) {
    if (absl::Status s = WarmUp(*job); !s.ok()) {
      if (!runner_.Availability().ok()) return BatchEnd::kDeviceLost;
      *why = absl::StrCat("device warm-up failed: ", s.message());
      return BatchEnd::kFailed;
    }
  }
  audience_ = JobEventBus::Audience::kObservers;
  const LoopEnd end = RunGroups(*share);
  audience_ = JobEventBus::Audience::kAll;
  warm_job_ = job_id;
  warm_since_ = std::chrono::steady_clock::now();
  switch (end) {
    case LoopEnd::kStop:
    case LoopEnd::kCancel:
      return BatchEnd::kStopped;
    case LoopEnd::kDeviceLost:
      return BatchEnd::kDeviceLost;
    case LoopEnd::kDone:
      break;
  }
  if (std::string failure = share->failure(); !failure.empty()) {
    *why = std::move(failure);
    return BatchEnd::kFailed;
  }
  return BatchEnd::kDone;
}

absl::StatusOr<bool> JobExecutor::FinishBatch(int64_t job_id, int64_t batch_id) {
  return WithStoreRetry(job_id, [&] { return store_.FinishClusterBatch(batch_id); });
}

void JobExecutor::Conclude(int64_t job_id) {
  audience_ = JobEventBus::Audience::kObservers;
  EndRanToTheEnd(job_id);
  audience_ = JobEventBus::Audience::kAll;
}

JobExecutor::LoopEnd JobExecutor::RunGroups(JobShare& share) {
  const int64_t job_id = share.job().id;
  while (true) {
    switch (interrupt_(job_id)) {
      case Interrupt::kStop:
        return LoopEnd::kStop;
      case Interrupt::kCancel:
        return LoopEnd::kCancel;
      case Interrupt::kNone:
        break;
    }
    const std::optional<size_t> g = share.Take();
    if (!g.has_value()) return LoopEnd::kDone;
    auto end = RunGroup(share, share.group(*g));
    if (!end.ok()) {
      share.Done();
      share.Close(absl::StrCat("store failure: ", end.status().message()));
      return LoopEnd::kDone;
    }
    if (*end == ItemEnd::kDeviceLost) {
      share.Return(*g);
      return LoopEnd::kDeviceLost;
    }
    share.Done();
  }
}

absl::Status JobExecutor::WarmUp(const core::JobRecord& job) {
  absl::Status s = runner_.BeginJob(job.spec.timing);
  // A worker that died or hung in the warm-up has been replaced: the new one tries once.
  if (absl::IsAborted(s) || absl::IsDeadlineExceeded(s)) {
    spdlog::warn("job {}: device warm-up failed ({}); trying once more", job.id,
                 std::string(s.message()));
    s = runner_.BeginJob(job.spec.timing);
  }
  return s;
}

void JobExecutor::EndRanToTheEnd(int64_t job_id) {
  auto job = store_.GetJob(job_id);
  if (!job.ok()) {
    EndJob(job_id, core::JobState::kFailed,
           absl::StrCat("store failure: ", job.status().message()));
  } else if (job->failed_items > 0) {
    EndJob(job_id, core::JobState::kPartial,
           absl::StrCat(job->failed_items, " of ", job->total_items, " items failed"));
  } else {
    EndJob(job_id, core::JobState::kSucceeded, "");
  }
}

absl::StatusOr<JobExecutor::ItemEnd> JobExecutor::RunGroup(JobShare& share,
                                                           const std::vector<size_t>& batch) {
  const std::vector<core::ItemRecord>& items = share.items();
  std::vector<core::WorkItem> batch_items;
  for (size_t i : batch) batch_items.push_back(items[i].item);
  std::vector<size_t> measure;
  std::vector<std::string> keys;
  for (const std::vector<size_t>& members : core::GroupItems(batch_items)) {
    std::vector<size_t> group;
    for (size_t m : members) group.push_back(batch[m]);
    ASSIGN_OR_RETURN(const ItemEnd end, SettleGroup(share, group, &measure, &keys));
    if (end == ItemEnd::kDeviceLost) return end;
  }
  if (!measure.empty()) RETURN_IF_ERROR(MeasureGroup(share, measure, keys));
  return ItemEnd::kRecorded;
}

absl::StatusOr<JobExecutor::ItemEnd> JobExecutor::SettleGroup(JobShare& share,
                                                              const std::vector<size_t>& group,
                                                              std::vector<size_t>* measure,
                                                              std::vector<std::string>* keys_out) {
  const core::JobRecord& job = share.job();
  const std::vector<core::ItemRecord>& items = share.items();
  const core::TimingOptions& timing = job.spec.timing;
  std::vector<size_t> remaining;
  std::vector<std::string> keys;
  for (size_t i : group) {
    // A group handed back by a device that went away may be partly recorded already.
    if (share.IsFinished(items[i].item.id)) continue;
    const core::RecipeSupport support = runner_.Supports(items[i].item.recipe);
    if (!support.supported) {
      RETURN_IF_ERROR(Finish(share, items[i], core::ItemStatus::kNotSupported, support.reason, ""));
      continue;
    }
    remaining.push_back(i);
    // A profiled measurement ran once more under a profiler: stored under a key no lookup
    // makes, so it is never served as a cached result.
    keys.push_back(core::CacheKey(runner_.Info(), items[i].item, timing,
                                  core::ContextOf(job.spec, items[i].item.op)) +
                   (job.spec.profile ? "|profiled" : ""));
  }
  if (remaining.empty()) return ItemEnd::kRecorded;
  // A profile job measures everything itself: the profiler must see every item.
  const bool use_cache = !job.spec.force && !job.spec.profile;
  if (use_cache) {
    ASSIGN_OR_RETURN(const bool served, ServeFromCache(share, remaining, keys));
    if (served) return ItemEnd::kRecorded;
  }
  // A device that went away since the last group hands the rest of the job back.
  if (!runner_.Availability().ok()) return ItemEnd::kDeviceLost;
  std::vector<size_t> fit;
  std::vector<std::string> fit_keys;
  const std::vector<absl::Status>& answers = Fits(share);
  for (size_t r = 0; r < remaining.size(); ++r) {
    const core::ItemRecord& record = items[remaining[r]];
    const absl::Status& fits = answers[remaining[r]];
    // Unavailable: the device went away, or its worker is restarting (then MeasureGroup
    // waits for the new one, which checks the items again).
    if (absl::IsUnavailable(fits) && !runner_.Availability().ok()) return ItemEnd::kDeviceLost;
    if (!fits.ok() && !absl::IsUnavailable(fits)) {
      const storage::ItemFinish f =
          Failure(job, record, fits, share.IsLastPending({remaining[r]}, remaining[r]), keys[r]);
      RETURN_IF_ERROR(Finish(share, record, f.status, f.error, keys[r]));
      continue;
    }
    fit.push_back(remaining[r]);
    fit_keys.push_back(keys[r]);
  }
  if (fit.empty()) return ItemEnd::kRecorded;
  // Without the refused items the rest may be one cached group (e.g. bf16 of a shape FP8
  // cannot take).
  if (use_cache && fit.size() < remaining.size()) {
    ASSIGN_OR_RETURN(const bool served, ServeFromCache(share, fit, fit_keys));
    if (served) return ItemEnd::kRecorded;
  }
  measure->insert(measure->end(), fit.begin(), fit.end());
  keys_out->insert(keys_out->end(), fit_keys.begin(), fit_keys.end());
  return ItemEnd::kRecorded;
}

const std::vector<absl::Status>& JobExecutor::Fits(const JobShare& share) {
  const int64_t job_id = share.job().id;
  if (fits_job_ == job_id && fits_answered_) return fits_;
  if (fits_job_ != job_id && hooks_.submit_fits) {
    std::optional<std::vector<absl::Status>> given = hooks_.submit_fits(job_id);
    if (given.has_value() && given->size() == share.items().size()) {
      fits_job_ = job_id;
      fits_answered_ = true;
      fits_ = *std::move(given);
      return fits_;
    }
  }
  std::vector<core::WorkItem> items;
  items.reserve(share.items().size());
  for (const core::ItemRecord& record : share.items()) items.push_back(record.item);
  absl::StatusOr<std::vector<absl::Status>> answers =
      runner_.CanImplement(items, share.job().spec.timing);
  if (answers.ok() && answers->size() != items.size()) {
    answers = absl::InternalError(absl::StrCat("the device answered ", answers->size(), " of ",
                                               items.size(), " items of a fit check"));
  }
  fits_job_ = job_id;
  fits_answered_ = answers.ok();
  if (fits_answered_) {
    fits_ = *std::move(answers);
  } else {
    fits_.assign(items.size(), answers.status());
  }
  return fits_;
}

absl::StatusOr<bool> JobExecutor::ServeFromCache(JobShare& share, const std::vector<size_t>& group,
                                                 const std::vector<std::string>& keys) {
  const std::vector<core::ItemRecord>& items = share.items();
  std::vector<storage::ItemFinish> finishes;
  for (size_t g = 0; g < group.size(); ++g) {
    ASSIGN_OR_RETURN(std::optional<storage::CachedResult> hit,
                     WithStoreRetry(share.job().id, [&] { return store_.LookupCache(keys[g]); }));
    // Comparisons pair members of the same rounds: a partial hit, or hits from different
    // measurement groups, measure the whole group again.
    if (!hit.has_value() || (!finishes.empty() && hit->measurement.group_uid !=
                                                      finishes.front().measurement->group_uid)) {
      return false;
    }
    finishes.push_back({items[group[g]].item.id, core::ItemStatus::kDone, "",
                        std::move(hit->measurement), keys[g], hit->result_id});
  }
  RETURN_IF_ERROR(FinishAll(share, group, finishes));
  return true;
}

absl::Status JobExecutor::MeasureGroup(JobShare& share, const std::vector<size_t>& group,
                                       const std::vector<std::string>& keys) {
  const core::JobRecord& job = share.job();
  const std::vector<core::ItemRecord>& items = share.items();
  for (size_t i : group) {
    RETURN_IF_ERROR(
        WithStoreRetry(job.id, [&] { return store_.MarkItemRunning(items[i].item.id); }));
    core::ItemRecord running = items[i];
    running.status = core::ItemStatus::kRunning;
    PublishItem(JobEvent::Kind::kItemStarted, job.id, running);
  }
  return MeasureAttempt(share, group, keys, std::max(job.spec.retries, 0), "");
}

storage::ItemFinish JobExecutor::Failure(const core::JobRecord& job, const core::ItemRecord& record,
                                         const absl::Status& why, bool last,
                                         const std::string& cache_key) {
  const std::string source = core::SourceOf(why);
  spdlog::warn("job {} item {} ({}): {}{}", job.id, record.item.seq,
               core::DescribeItem(record.item), std::string(why.message()),
               source.empty() ? "" : absl::StrCat(" [at ", source, "]"));
  // The device or the library refusing a configuration (FP8 alignment, cuBLASLt
  // NOT_SUPPORTED) is "this recipe cannot run this here", not a broken measurement.
  if (IsNotSupportedRefusal(why)) {
    return {record.item.id,
            core::ItemStatus::kNotSupported,
            std::string(why.message()),
            std::nullopt,
            cache_key,
            std::nullopt};
  }
  return {record.item.id,
          core::ItemStatus::kFailed,
          absl::StrCat(core::DescribeItem(record.item), ": ", why.message(),
                       last ? "; the item failed (it was the job's last item)"
                            : "; the item failed and the job goes on with its next item"),
          std::nullopt,
          cache_key,
          std::nullopt};
}

absl::Status JobExecutor::FinishAll(JobShare& share, const std::vector<size_t>& group,
                                    const std::vector<storage::ItemFinish>& finishes) {
  const core::JobRecord& job = share.job();
  RETURN_IF_ERROR(WithStoreRetry(
      job.id, [&] { return store_.FinishItems(finishes, runner_.Info(), job.spec.timing); }));
  for (size_t g = 0; g < group.size(); ++g) {
    const storage::ItemFinish& f = finishes[g];
    share.MarkFinished(f.item_id);
    core::ItemRecord done = share.items()[group[g]];
    done.status = f.status;
    done.error = f.error;
    done.result = f.measurement;
    done.cached = f.cached_result_id.has_value();
    PublishItem(f.status == core::ItemStatus::kFailed ? JobEvent::Kind::kItemFailed
                                                      : JobEvent::Kind::kItemFinished,
                job.id, done);
  }
  return absl::OkStatus();
}

absl::Status JobExecutor::Finish(JobShare& share, const core::ItemRecord& record,
                                 core::ItemStatus status, const std::string& error,
                                 const std::string& cache_key) {
  const core::JobRecord& job = share.job();
  RETURN_IF_ERROR(WithStoreRetry(job.id, [&] {
    return store_.FinishItem(record.item.id, status, error, std::nullopt, runner_.Info(),
                             job.spec.timing, cache_key, std::nullopt);
  }));
  share.MarkFinished(record.item.id);
  core::ItemRecord done = record;
  done.status = status;
  done.error = error;
  PublishItem(status == core::ItemStatus::kFailed ? JobEvent::Kind::kItemFailed
                                                  : JobEvent::Kind::kItemFinished,
              job.id, done);
  return absl::OkStatus();
}

void JobExecutor::PublishItem(JobEvent::Kind kind, int64_t job_id, const core::ItemRecord& item) {
  // The event carries the job's counters, a store read: skip it when nobody watches.
  if (!bus_.HasListeners(job_id)) return;
  // Observers of every job (metrics) need no counters: no read per item for them.
  if (audience_ == JobEventBus::Audience::kObservers || !bus_.HasWatchers(job_id)) {
    core::JobRecord id_only;
    id_only.id = job_id;
    bus_.Publish(JobEvent{kind, std::move(id_only), item}, audience_);
    return;
  }
  auto job = store_.GetJob(job_id);
  if (!job.ok()) return;
  bus_.Publish(JobEvent{kind, *std::move(job), item}, audience_);
}

void JobExecutor::EndJob(int64_t job_id, core::JobState state, const std::string& error) {
  if (auto s = WithStoreRetry(job_id, [&] { return store_.SetJobState(job_id, state, error); });
      !s.ok()) {
    spdlog::error("job {}: cannot set state {}: {}", job_id, core::ToString(state), s.ToString());
  }
  spdlog::info("job {}: {}{}{}", job_id, core::ToString(state), error.empty() ? "" : ": ", error);
  auto job = store_.GetJob(job_id);
  if (job.ok()) {
    bus_.Publish(JobEvent{JobEvent::Kind::kJobFinished, *std::move(job), std::nullopt}, audience_);
  }
}

}  // namespace gemmprof::queue
