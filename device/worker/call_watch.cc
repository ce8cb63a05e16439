// RemoteRunner's watch over a MeasureGroup call (docs/measurement.md "Faults"): the
// worker's heartbeats, the no-progress bound that finds a hang, and a cancel that stops
// the call at a step boundary or kills a worker that does not stop.
#include <signal.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <optional>

#include "absl/strings/str_cat.h"
#include "core/error_detail.h"
#include "device/worker/item_deadline.h"
#include "device/worker/protocol.h"
#include "device/worker/remote_runner.h"

namespace gemmprof::worker {

void RemoteRunner::SendCancel(const WorkerPtr& w, uint64_t request_id) {
  wp::Request cancel;
  cancel.set_id(next_request_id_++);
  cancel.mutable_cancel()->set_request_id(request_id);
  std::lock_guard send_lock(query_send_mu_);
  // Its answer is skipped by the next fit check's reader; a worker that cannot take it
  // is killed when the grace runs out.
  (void)w->query.Send(cancel);
}

absl::Status RemoteRunner::AwaitWatched(const WorkerPtr& w, uint64_t id, double timeout_s,
                                        const CallWatch& watch, wp::Response* response,
                                        bool* handled) {
  using Clock = std::chrono::steady_clock;
  // How often the watch looks at the clock between answers and heartbeats.
  constexpr double kSliceS = 0.05;
  const auto began = Clock::now();
  auto last_step = began;
  int64_t steps = 0, item_id = 0;
  double slowest_ms = 0;
  std::optional<Clock::time_point> cancel_sent;
  const auto since = [](Clock::time_point t) {
    return std::chrono::duration<double>(Clock::now() - t).count();
  };
  // Ends the call with `why`: the worker is killed, and the call's status is `why`.
  const auto kill_with = [&](absl::Status why) {
    Kill(w);
    AwaitExit(w, -1);
    *handled = true;
    return why;
  };
  for (;;) {
    absl::Status io = w->run.Receive(response, kSliceS);
    if (io.ok() && response->id() == id) {
      if (!response->has_progress()) return absl::OkStatus();  // the answer
      const wp::Progress& p = response->progress();
      if (p.steps() != steps) {
        steps = p.steps();
        last_step = Clock::now();
      }
      slowest_ms = p.slowest_step_ms();
      item_id = p.item_id();
    } else if (!io.ok() && !absl::IsDeadlineExceeded(io)) {
      return io;  // the worker went away: WorkerLost says how
    }
    if (since(began) > timeout_s) {
      spdlog::warn("{}: no answer within {} s; worker pid {} killed", DeviceName(),
                   FormatSeconds(timeout_s), w->pid);
      return kill_with(core::MarkInFlight(
          absl::DeadlineExceededError(absl::StrCat("timed out after ", FormatSeconds(timeout_s),
                                                   " s; the worker was killed and restarts")),
          item_id));
    }
    if (!cancel_sent && watch.cancelled && watch.cancelled()) {
      SendCancel(w, id);
      cancel_sent = Clock::now();
    }
    if (cancel_sent && since(*cancel_sent) > options_.cancel_grace_s) {
      spdlog::warn("{}: worker pid {} did not stop within {} s of a cancel; killed", DeviceName(),
                   w->pid, FormatSeconds(options_.cancel_grace_s));
      return kill_with(absl::CancelledError(absl::StrCat(
          "cancelled by request; the worker did not stop within ",
          FormatSeconds(options_.cancel_grace_s), " s, so it was killed and restarts")));
    }
    const double bound = NoProgressSeconds(slowest_ms, watch.setup_s);
    if (since(last_step) > bound) {
      {
        std::lock_guard lock(mu_);
        ++hangs_;
      }
      const std::string where = slowest_ms > 0 ? absl::StrCat(" after ", steps, " steps")
                                               : std::string(" before its first round");
      spdlog::warn("{}: no progress for {} s{}; worker pid {} killed", DeviceName(),
                   FormatSeconds(bound), where, w->pid);
      return kill_with(core::MarkInFlight(
          absl::DeadlineExceededError(absl::StrCat("hung: no progress for ", FormatSeconds(bound),
                                                   " s; the worker was killed and restarts")),
          item_id));
    }
  }
}

}  // namespace gemmprof::worker
