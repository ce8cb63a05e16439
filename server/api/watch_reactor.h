// Server-streaming reactor of WatchJob: the current state first, then every progress
// event of the job until it ends (or the client goes away).
#pragma once

#include <deque>
#include <mutex>

#include "gemmprof/v1/gemmprof.grpc.pb.h"
#include "server/queue/job_queue.h"
#include "server/security/watch_limiter.h"

namespace gemmprof::api {

// Deletes itself in OnDone. Events are pushed from worker threads. Holds `lease` (one
// of its client's --max-watches-per-client) until then.
class WatchReactor final : public grpc::ServerWriteReactor<v1::JobEvent> {
 public:
  WatchReactor(queue::JobQueue& queue, int64_t job_id, security::WatchLimiter::Lease lease = {});

  void OnWriteDone(bool ok) override;
  void OnCancel() override;
  void OnDone() override;

 private:
  void Push(v1::JobEvent event);
  void MaybeWriteLocked();
  void FinishLocked(const grpc::Status& status);

  queue::JobQueue& queue_;
  security::WatchLimiter::Lease lease_;
  std::recursive_mutex mu_;  // gRPC may run a reaction inline inside StartWrite
  std::deque<v1::JobEvent> pending_;
  v1::JobEvent in_flight_;
  int64_t token_ = 0;
  bool writing_ = false;
  bool last_queued_ = false;  // the JOB_FINISHED event is queued; ignore later events
  bool finished_ = false;
};

}  // namespace gemmprof::api
