// JobExecutor's measurement of a batch and what follows a worker fault
// (docs/measurement.md "Faults"): one MeasureGroup call per attempt, its outcomes
// recorded together; after a fault, a retry, a bisection by measurement group, or the
// failure of the group a hang names.
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>

#include "absl/strings/str_cat.h"
#include "core/error_detail.h"
#include "core/group.h"
#include "server/queue/job_executor.h"
#include "server/queue/unix_clock.h"

namespace gemmprof::queue {
namespace {

// The runner's outcomes must answer the request item for item.
absl::Status CheckOutcomes(const core::GroupRequest& request, const core::GroupResult& result) {
  if (result.outcomes.size() != request.items.size()) {
    return absl::InternalError(absl::StrCat("the device returned ", result.outcomes.size(),
                                            " outcomes for a group of ", request.items.size(),
                                            " items"));
  }
  for (size_t i = 0; i < result.outcomes.size(); ++i) {
    if (result.outcomes[i].item_id != request.items[i].id) {
      return absl::InternalError(absl::StrCat("the device answered item ",
                                              result.outcomes[i].item_id, " where item ",
                                              request.items[i].id, " was asked"));
    }
  }
  return absl::OkStatus();
}

// A failure of the worker rather than of the GEMMs: it died, hung or lost its device
// context. Measuring again on the restarted worker may succeed.
bool IsWorkerFault(const absl::Status& s) {
  return absl::IsAborted(s) || absl::IsDeadlineExceeded(s) || core::IsContextLost(s);
}

}  // namespace

absl::Status JobExecutor::MeasureAttempt(JobShare& share, const std::vector<size_t>& group,
                                         const std::vector<std::string>& keys, int retries_left,
                                         const std::string& retried_after) {
  const core::JobRecord& job = share.job();
  const std::vector<core::ItemRecord>& items = share.items();
  core::GroupRequest request;
  request.timing = job.spec.timing;
  request.share_identical_work = true;
  request.profile = job.spec.profile;
  request.group_uid = absl::StrCat(runner_.Info().uuid, "/j", job.id, "/s",
                                   items[group.front()].item.seq, "/", UnixNowMs());
  request.cancelled = [this, id = job.id] { return interrupt_(id) == Interrupt::kCancel; };
  for (size_t i : group) request.items.push_back(items[i].item);
  absl::StatusOr<core::GroupResult> result = runner_.MeasureGroup(request);
  if (result.ok()) {
    if (absl::Status s = CheckOutcomes(request, *result); !s.ok()) result = s;
  }
  if (!result.ok() && IsWorkerFault(result.status())) {
    return Retry(share, group, keys, retries_left, retried_after, result.status());
  }
  // The batch each result was measured in, for the record (docs/measurement.md "Contexts").
  const std::string batch_gemms = core::BatchGemms(request.items);
  std::vector<storage::ItemFinish> finishes;
  for (size_t g = 0; g < group.size(); ++g) {
    const core::ItemRecord& record = items[group[g]];
    const bool last = share.IsLastPending(group, group[g]);
    if (!result.ok() && absl::IsCancelled(result.status())) {
      finishes.push_back({record.item.id,
                          core::ItemStatus::kCancelled,
                          std::string(result.status().message()),
                          std::nullopt,
                          keys[g],
                          {}});
      continue;
    }
    // A failure of the call fails every member alike.
    if (!result.ok()) {
      finishes.push_back(Failure(job, record, result.status(), last, keys[g]));
      continue;
    }
    core::ItemOutcome& outcome = result->outcomes[g];
    if (outcome.status.ok() && outcome.measurement.has_value()) {
      outcome.measurement->batch_id = request.group_uid;
      outcome.measurement->context = core::ContextOf(job.spec, record.item.op);
      outcome.measurement->batch_gemms = batch_gemms;
      if (!retried_after.empty()) {
        absl::StrAppend(&outcome.measurement->notes, outcome.measurement->notes.empty() ? "" : "; ",
                        "measured again after a worker fault (", retried_after, ")");
      }
      finishes.push_back(
          {record.item.id, core::ItemStatus::kDone, "", outcome.measurement, keys[g], {}});
    } else {
      const absl::Status why = outcome.status.ok()
                                   ? absl::InternalError("the device returned no measurement")
                                   : outcome.status;
      finishes.push_back(Failure(job, record, why, last, keys[g]));
    }
  }
  return FinishAll(share, group, finishes);
}

absl::Status JobExecutor::Retry(JobShare& share, const std::vector<size_t>& group,
                                const std::vector<std::string>& keys, int retries_left,
                                const std::string& retried_after, const absl::Status& fault) {
  const core::JobRecord& job = share.job();
  const std::vector<core::ItemRecord>& items = share.items();
  const bool reproduced = !retried_after.empty();
  // Fails `part` (positions in `group`) with the fault, saying when it came back.
  const auto fail = [&](const std::vector<size_t>& part) {
    const absl::Status why =
        reproduced ? core::AppendToMessage(fault, "; reproduced on retry") : fault;
    std::vector<size_t> indexes;
    std::vector<storage::ItemFinish> finishes;
    for (size_t p : part) {
      indexes.push_back(group[p]);
      finishes.push_back(
          Failure(job, items[group[p]], why, share.IsLastPending(group, group[p]), keys[p]));
    }
    return FinishAll(share, indexes, finishes);
  };
  // Measures `part` (positions in `group`) once more; a job cancelled meanwhile records
  // the part cancelled instead.
  const auto again = [&](const std::vector<size_t>& part, int left) {
    std::vector<size_t> sub;
    std::vector<std::string> sub_keys;
    for (size_t p : part) {
      sub.push_back(group[p]);
      sub_keys.push_back(keys[p]);
    }
    if (interrupt_(job.id) == Interrupt::kCancel) {
      std::vector<storage::ItemFinish> cancelled;
      for (size_t p : part) {
        cancelled.push_back({items[group[p]].item.id,
                             core::ItemStatus::kCancelled,
                             "cancelled by request before its retry",
                             std::nullopt,
                             keys[p],
                             {}});
      }
      return FinishAll(share, sub, cancelled);
    }
    if (hooks_.retried) hooks_.retried();
    return MeasureAttempt(share, sub, sub_keys, left, std::string(fault.message()));
  };
  std::vector<size_t> all(group.size());
  for (size_t p = 0; p < all.size(); ++p) all[p] = p;
  // The measurement groups of the batch, as positions in `group`.
  std::vector<core::WorkItem> work;
  for (size_t i : group) work.push_back(items[i].item);
  const std::vector<std::vector<size_t>> groups = core::GroupItems(work);
  // A hang (or the call's bound) names the group in flight: it fails at once, and the
  // rest of the batch, which was not at fault, is measured again.
  if (const int64_t in_flight = core::InFlightItem(fault); in_flight != 0) {
    std::vector<size_t> culprit, rest;
    for (const std::vector<size_t>& g : groups) {
      const bool hit =
          std::any_of(g.begin(), g.end(), [&](size_t p) { return work[p].id == in_flight; });
      std::vector<size_t>& to = hit ? culprit : rest;
      to.insert(to.end(), g.begin(), g.end());
    }
    if (!culprit.empty()) {
      spdlog::warn("job {}: {}; its group fails, {} other items of the batch are measured again",
                   job.id, std::string(fault.message()), rest.size());
      RETURN_IF_ERROR(fail(culprit));
      if (rest.empty()) return absl::OkStatus();
      return retries_left > 0 || reproduced ? again(rest, std::max(retries_left - 1, 0))
                                            : fail(rest);
    }
  }
  if (retries_left > 0) {
    spdlog::warn("job {}: {}; measuring the batch's {} items again", job.id,
                 std::string(fault.message()), group.size());
    return again(all, retries_left - 1);
  }
  if (!reproduced || groups.size() == 1) return fail(all);
  // The fault came back: halve the batch by measurement groups, each half measured once,
  // until the group that brings it is alone.
  std::vector<size_t> first, second;
  for (size_t g = 0; g < groups.size(); ++g) {
    std::vector<size_t>& half = g < groups.size() / 2 ? first : second;
    half.insert(half.end(), groups[g].begin(), groups[g].end());
  }
  spdlog::warn("job {}: {} again; splitting the batch ({} and {} items)", job.id,
               std::string(fault.message()), first.size(), second.size());
  RETURN_IF_ERROR(again(first, 0));
  return again(second, 0);
}

}  // namespace gemmprof::queue
