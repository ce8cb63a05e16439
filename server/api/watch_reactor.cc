#include "server/api/watch_reactor.h"

#include "wire/convert.h"
#include "wire/grpc_status.h"

namespace gemmprof::api {

// Events and statuses convert with wire/, shared with the client.
using wire::ToGrpcStatus;
using wire::ToProto;

WatchReactor::WatchReactor(queue::JobQueue& queue, int64_t job_id,
                           security::WatchLimiter::Lease lease)
    : queue_(queue), lease_(std::move(lease)) {
  // Subscribe before reading the snapshot so nothing between the two is lost; the lock
  // holds back events until the snapshot is queued first.
  std::lock_guard lock(mu_);
  token_ = queue_.events().Subscribe(job_id, [this](const core::JobEvent& e) { Push(ToProto(e)); });
  auto job = queue_.store().GetJob(job_id);
  if (!job.ok()) {
    FinishLocked(ToGrpcStatus(job.status()));
    return;
  }
  // Another node's job ends unseen here unless it has ended already.
  if (absl::Status own = queue_.CheckOwnJob(*job, "watch");
      !own.ok() && !core::IsTerminal(job->state)) {
    FinishLocked(ToGrpcStatus(own));
    return;
  }
  core::JobEvent snapshot{core::JobEvent::Kind::kSnapshot, *job, std::nullopt};
  pending_.push_back(ToProto(snapshot));
  if (core::IsTerminal(job->state)) {
    snapshot.kind = core::JobEvent::Kind::kJobFinished;
    pending_.push_back(ToProto(snapshot));
    last_queued_ = true;
  }
  MaybeWriteLocked();
}

void WatchReactor::Push(v1::JobEvent event) {
  std::lock_guard lock(mu_);
  if (finished_ || last_queued_) return;
  if (event.kind() == v1::JobEvent::JOB_FINISHED) last_queued_ = true;
  pending_.push_back(std::move(event));
  MaybeWriteLocked();
}

void WatchReactor::MaybeWriteLocked() {
  if (finished_ || writing_) return;
  if (pending_.empty()) {
    if (last_queued_) FinishLocked(grpc::Status::OK);
    return;
  }
  in_flight_ = std::move(pending_.front());
  pending_.pop_front();
  writing_ = true;
  StartWrite(&in_flight_);
}

void WatchReactor::OnWriteDone(bool ok) {
  std::lock_guard lock(mu_);
  writing_ = false;
  if (!ok) {
    FinishLocked(grpc::Status(grpc::StatusCode::UNAVAILABLE, "watch stream write failed"));
    return;
  }
  MaybeWriteLocked();
}

void WatchReactor::OnCancel() {
  std::lock_guard lock(mu_);
  FinishLocked(grpc::Status::CANCELLED);
}

void WatchReactor::FinishLocked(const grpc::Status& status) {
  if (finished_) return;
  finished_ = true;
  Finish(status);
}

void WatchReactor::OnDone() {
  // After Unsubscribe returns no listener call is in flight, so deleting is safe.
  queue_.events().Unsubscribe(token_);
  delete this;
}

}  // namespace gemmprof::api
