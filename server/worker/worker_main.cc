#include "server/worker/worker_main.h"

#include <signal.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/error_detail.h"
#include "server/worker/channel.h"
#include "server/worker/fault.h"
#include "server/worker/protocol.h"
#include "wire/convert.h"

namespace gemmprof::worker {
namespace {

// Answers CanImplement until the daemon closes the query channel. Runs beside the run
// loop: Runner::CanImplement is safe against a concurrent Run (see runner.h).
void ServeQueries(const MessageChannel& channel, const device::Runner& runner) {
  wp::Request request;
  while (channel.Receive(&request, -1).ok()) {
    wp::Response response;
    response.set_id(request.id());
    core::WorkItem item;
    core::TimingOptions timing;
    absl::Status status =
        request.has_can_implement()
            ? FromItemCall(request.can_implement(), &item, &timing)
            : absl::InvalidArgumentError("the query channel takes CanImplement only");
    if (status.ok()) status = runner.CanImplement(item, timing);
    *response.mutable_status() = ToProto(status);
    if (!channel.Send(response).ok()) return;
  }
}

[[noreturn]] void HangForever() {
  for (;;) pause();
}

// What a fault does to item `seq`; returns only for the illegal-address and context-lost
// faults.
absl::Status InjectFault(const WorkerFault& fault, int32_t seq, const WorkerHooks& hooks) {
  spdlog::warn("{} is set: injecting a fault at item {}", kFaultEnvVar, seq);
  spdlog::default_logger()->flush();
  switch (fault.kind) {
    case WorkerFault::Kind::kHang:
      HangForever();
    case WorkerFault::Kind::kCrash:
      std::abort();
    case WorkerFault::Kind::kKill:
      raise(SIGKILL);
      HangForever();
    case WorkerFault::Kind::kExit:
      _exit(kFaultExitStatus);
    case WorkerFault::Kind::kIllegalAddress: {
      if (!hooks.illegal_address) {
        return absl::FailedPreconditionError(
            absl::StrCat(kFaultEnvVar, ": illegal-address needs the cuda backend"));
      }
      absl::Status s = hooks.illegal_address();
      return s.ok() ? absl::InternalError("the illegal-address fault did not fault") : s;
    }
    case WorkerFault::Kind::kContextLost:
      return core::MarkContextLost(
          absl::InternalError("device context lost (injected by the context-lost fault)"));
    case WorkerFault::Kind::kExitAtStart:
      break;
  }
  return absl::OkStatus();
}

absl::StatusOr<core::Measurement> RunItem(device::Runner& runner, const wp::ItemCall& call,
                                          const std::vector<WorkerFault>& faults,
                                          const WorkerHooks& hooks) {
  core::WorkItem item;
  core::TimingOptions timing;
  RETURN_IF_ERROR(FromItemCall(call, &item, &timing));
  if (std::optional<WorkerFault> fault = FaultForItem(faults, item.seq)) {
    RETURN_IF_ERROR(InjectFault(*fault, item.seq, hooks));
  }
  return runner.Run(item, timing);
}

wp::Response Answer(device::Runner& runner, const wp::Request& request,
                    const std::vector<WorkerFault>& faults, const WorkerHooks& hooks) {
  wp::Response response;
  response.set_id(request.id());
  absl::Status status;
  if (request.has_begin_job()) {
    absl::StatusOr<core::TimingOptions> timing = wire::FromProto(request.begin_job().timing());
    status = timing.ok() ? runner.BeginJob(*timing) : timing.status();
  } else if (request.has_run_item()) {
    absl::StatusOr<core::Measurement> m = RunItem(runner, request.run_item(), faults, hooks);
    if (m.ok()) *response.mutable_measurement() = wire::ToProto(*m);
    status = m.status();
  } else {
    status = absl::InvalidArgumentError("the run channel takes BeginJob and RunItem only");
  }
  *response.mutable_status() = ToProto(status);
  return response;
}

// Sends a Hello saying why this worker cannot serve, and returns `exit_code`.
int FailStart(const MessageChannel& run, const absl::Status& why, int exit_code) {
  spdlog::error("worker cannot start: {}", why.ToString());
  wp::Hello hello;
  hello.set_pid(getpid());
  *hello.mutable_status() = ToProto(why);
  (void)run.Send(hello);
  return exit_code;
}

}  // namespace

int RunWorker(int run_fd, int query_fd, const WorkerHooks& hooks) {
  MessageChannel run(run_fd), query(query_fd);
  const char* spec = std::getenv(kFaultEnvVar);
  absl::StatusOr<std::vector<WorkerFault>> faults = ParseWorkerFaults(spec ? spec : "");
  if (!faults.ok()) return FailStart(run, faults.status(), kExitBadFault);
  if (ExitsAtStart(*faults)) {
    spdlog::warn("{} is set: exiting at start", kFaultEnvVar);
    return kFaultExitStatus;
  }
  absl::StatusOr<std::unique_ptr<device::Runner>> runner = hooks.make_runner();
  if (!runner.ok()) return FailStart(run, runner.status(), kExitRunnerFailed);
  wp::Hello hello;
  hello.set_pid(getpid());
  *hello.mutable_device() = wire::ToProto((*runner)->Info());
  if (!run.Send(hello).ok()) return 0;
  std::thread queries([&] { ServeQueries(query, **runner); });
  wp::Request request;
  while (run.Receive(&request, -1).ok()) {
    const wp::Response response = Answer(**runner, request, *faults, hooks);
    if (!run.Send(response).ok()) break;
    if (response.status().context_lost()) {
      // Nothing more can run in this process, and tearing the runner down would only
      // meet the same error: leave at once, the daemon starts a fresh worker.
      spdlog::error("device context lost ({}); exiting for a fresh worker",
                    response.status().message());
      spdlog::default_logger()->flush();
      _exit(kExitContextLost);
    }
  }
  query.Shutdown();
  queries.join();
  return 0;
}

}  // namespace gemmprof::worker
