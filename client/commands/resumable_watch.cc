#include "client/commands/resumable_watch.h"

#include <algorithm>
#include <optional>
#include <unordered_map>

namespace gemmprof::client {
namespace {

// How far an item got on screen.
enum class Stage { kNone, kStarted, kFinal };

// The event kind the daemon sends when an item reaches `status`; nullopt when it sends
// none (queued, or cancelled with its job).
std::optional<core::JobEvent::Kind> EventFor(core::ItemStatus status) {
  switch (status) {
    case core::ItemStatus::kRunning:
      return core::JobEvent::Kind::kItemStarted;
    case core::ItemStatus::kDone:
    case core::ItemStatus::kNotSupported:
      return core::JobEvent::Kind::kItemFinished;
    case core::ItemStatus::kFailed:
      return core::JobEvent::Kind::kItemFailed;
    default:
      return std::nullopt;
  }
}

Stage StageOf(core::JobEvent::Kind kind) {
  return kind == core::JobEvent::Kind::kItemStarted ? Stage::kStarted : Stage::kFinal;
}

class Resumer {
 public:
  Resumer(GemmProfClient& client, int64_t job_id, const WatchHooks& hooks)
      : client_(client), job_id_(job_id), hooks_(hooks) {}

  absl::StatusOr<core::JobRecord> Run() {
    int64_t backoff_ms = hooks_.policy.initial_backoff_ms, waited_ms = 0;
    while (true) {
      events_in_stream_ = 0;
      const absl::Status s =
          client_.WatchJob(job_id_, [this](const core::JobEvent& e) { return OnEvent(e); });
      if (s.ok() && last_) return *last_;
      if (s.ok()) return absl::UnavailableError("the watch stream ended without an event");
      if (!absl::IsUnavailable(s) || !last_) return s;
      if (events_in_stream_ > 0) {  // that stream worked: a new outage starts
        backoff_ms = hooks_.policy.initial_backoff_ms;
        waited_ms = 0;
        hooks_.notice("gemmprof: connection to " + hooks_.address + " lost; reconnecting...");
      }
      if (waited_ms >= hooks_.policy.give_up_after_ms)
        return absl::UnavailableError("gave up reconnecting to " + hooks_.address + " after " +
                                      std::to_string(waited_ms / 1000) + " s (" +
                                      std::string(s.message()) + "); run `gemmprof watch " +
                                      std::to_string(job_id_) + "` again later");
      hooks_.sleep_ms(backoff_ms);
      waited_ms += backoff_ms;
      backoff_ms = std::min(backoff_ms * 2, hooks_.policy.max_backoff_ms);
      resuming_ = true;
    }
  }

 private:
  absl::Status OnEvent(const core::JobEvent& e) {
    ++events_in_stream_;
    if (e.kind == core::JobEvent::Kind::kSnapshot) return OnSnapshot(e);
    if (e.kind == core::JobEvent::Kind::kJobFinished) {
      if (!finished_) Emit(e);
      finished_ = true;
      return absl::OkStatus();
    }
    if (!e.item) return absl::OkStatus();
    Stage& stage = stages_[e.item->item.id];
    if (stage >= StageOf(e.kind)) return absl::OkStatus();  // shown before the reconnect
    stage = StageOf(e.kind);
    Emit(e);
    return absl::OkStatus();
  }

  absl::Status OnSnapshot(const core::JobEvent& e) {
    if (!last_) Emit(e);
    const bool resumed = resuming_;
    if (resumed) hooks_.notice("gemmprof: reconnected to " + hooks_.address);
    resuming_ = false;
    // Without a baseline (its look failed) there is nothing to catch up against.
    if (!baseline_ready_) return TakeBaseline(e.job);
    return resumed && !ended_before_watch_ ? CatchUp() : absl::OkStatus();
  }

  // Items final before the watch began were never shown and must not be shown as missed
  // after a reconnect: mark them. A job with no finished item, or one that has ended
  // (its JOB_FINISHED follows), needs no look.
  absl::Status TakeBaseline(const core::JobRecord& job) {
    ended_before_watch_ = core::IsTerminal(job.state);
    if (job.finished_items > 0 && !ended_before_watch_) {
      ASSIGN_OR_RETURN(const core::Report report, client_.GetReport(job_id_));
      for (const core::ItemRecord& item : report.items)
        if (core::IsFinal(item.status)) stages_[item.item.id] = Stage::kFinal;
    }
    baseline_ready_ = true;
    return absl::OkStatus();
  }

  // Emits the item events the broken stream did not deliver, as the daemon would have:
  // item order, counters counting up from what was shown.
  absl::Status CatchUp() {
    ASSIGN_OR_RETURN(core::Report report, client_.GetReport(job_id_));
    std::sort(report.items.begin(), report.items.end(),
              [](const auto& a, const auto& b) { return a.item.seq < b.item.seq; });
    core::JobEvent missed;
    missed.job = report.job;
    // A job that ended meanwhile ends with the stream's JOB_FINISHED, after these.
    if (core::IsTerminal(missed.job.state)) missed.job.state = core::JobState::kRunning;
    missed.job.finished_items = last_->finished_items;
    missed.job.failed_items = last_->failed_items;
    for (const core::ItemRecord& item : report.items) {
      const std::optional<core::JobEvent::Kind> kind = EventFor(item.status);
      if (!kind) continue;
      Stage& stage = stages_[item.item.id];
      if (stage >= StageOf(*kind)) continue;
      stage = StageOf(*kind);
      if (stage == Stage::kFinal) {
        missed.job.finished_items =
            std::min(missed.job.finished_items + 1, report.job.finished_items);
        if (*kind == core::JobEvent::Kind::kItemFailed)
          missed.job.failed_items = std::min(missed.job.failed_items + 1, report.job.failed_items);
      }
      missed.kind = *kind;
      missed.item = item;
      Emit(missed);
    }
    return absl::OkStatus();
  }

  void Emit(const core::JobEvent& e) {
    hooks_.emit(e);
    last_ = e.job;
  }

  GemmProfClient& client_;
  const int64_t job_id_;
  const WatchHooks& hooks_;
  std::unordered_map<int64_t, Stage> stages_;  // by item id
  std::optional<core::JobRecord> last_;        // the job as last shown
  bool baseline_ready_ = false;
  bool ended_before_watch_ = false;  // no item event can have been missed
  bool resuming_ = false;            // the current stream replaces a broken one
  bool finished_ = false;            // JOB_FINISHED shown
  int events_in_stream_ = 0;
};

}  // namespace

absl::StatusOr<core::JobRecord> WatchWithResume(GemmProfClient& client, int64_t job_id,
                                                const WatchHooks& hooks) {
  return Resumer(client, job_id, hooks).Run();
}

}  // namespace gemmprof::client
