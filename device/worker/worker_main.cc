#include "device/worker/worker_main.h"

#include <signal.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/error_detail.h"
#include "device/worker/channel.h"
#include "device/worker/fault.h"
#include "device/worker/protocol.h"
#include "wire/convert.h"

namespace gemmprof::worker {
namespace {

// Answers CanImplement until the daemon closes the query channel. Runs beside the run
// loop: Runner::CanImplement is safe against a concurrent MeasureGroup (see runner.h).
void ServeQueries(const MessageChannel& channel, const device::Runner& runner) {
  wp::Request request;
  while (channel.Receive(&request, -1).ok()) {
    wp::Response response;
    response.set_id(request.id());
    std::vector<core::WorkItem> items;
    core::TimingOptions timing;
    absl::Status status =
        request.has_can_implement()
            ? FromFitCall(request.can_implement(), &items, &timing)
            : absl::InvalidArgumentError("the query channel takes CanImplement only");
    if (status.ok()) {
      absl::StatusOr<std::vector<absl::Status>> answers = runner.CanImplement(items, timing);
      status = answers.status();
      for (const absl::Status& a : answers.ok() ? *answers : std::vector<absl::Status>()) {
        *response.add_item_status() = ToProto(a);
      }
    }
    *response.mutable_status() = ToProto(status);
    if (!channel.Send(response).ok()) return;
  }
}

[[noreturn]] void HangForever() {
  for (;;) pause();
}

// What a fault does to item `seq`; returns only for the illegal-address, context-lost
// and refuse faults.
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
    case WorkerFault::Kind::kRefuse:
      return absl::FailedPreconditionError(
          absl::StrCat("not supported here: refused by ", kFaultEnvVar, " (refuse@", seq, ")"));
    case WorkerFault::Kind::kExitAtStart:
      break;
  }
  return absl::OkStatus();
}

// Measures the items of `request` that the refuse fault leaves to the runner; the
// refused ones get their refusal, every outcome in the request's order.
absl::StatusOr<core::GroupResult> MeasureUnrefused(device::Runner& runner,
                                                   const core::GroupRequest& request,
                                                   const std::vector<WorkerFault>& faults,
                                                   const WorkerHooks& hooks) {
  core::GroupRequest measured = request;
  measured.items.clear();
  for (const core::WorkItem& item : request.items) {
    if (!Refuses(faults, item.seq)) measured.items.push_back(item);
  }
  if (measured.items.size() == request.items.size()) return runner.MeasureGroup(request);
  core::GroupResult runs;
  if (!measured.items.empty()) {
    ASSIGN_OR_RETURN(runs, runner.MeasureGroup(measured));
  }
  if (runs.outcomes.size() != measured.items.size()) {
    return absl::InternalError(absl::StrCat("the runner answered ", runs.outcomes.size(),
                                            " outcomes for ", measured.items.size(), " items"));
  }
  core::GroupResult result;
  result.rounds = runs.rounds;
  result.stop_reason = std::move(runs.stop_reason);
  size_t next = 0;
  for (const core::WorkItem& item : request.items) {
    if (!Refuses(faults, item.seq)) {
      result.outcomes.push_back(std::move(runs.outcomes[next++]));
      continue;
    }
    core::ItemOutcome& refused = result.outcomes.emplace_back();
    refused.item_id = item.id;
    refused.status = InjectFault(*FaultForItem(faults, item.seq), item.seq, hooks);
  }
  return result;
}

// A fault @SEQ but refuse meets a group holding item SEQ, before any of it runs. A lost
// context in one item's outcome is lost for every item: it fails the group, so that the
// worker exits after answering.
absl::StatusOr<core::GroupResult> MeasureGroup(device::Runner& runner, const wp::GroupCall& call,
                                               const std::vector<WorkerFault>& faults,
                                               const WorkerHooks& hooks) {
  ASSIGN_OR_RETURN(core::GroupRequest request, FromGroupCall(call));
  std::vector<int32_t> seqs;
  seqs.reserve(request.items.size());
  for (const core::WorkItem& item : request.items) seqs.push_back(item.seq);
  if (std::optional<WorkerFault> fault = FaultForGroup(faults, seqs)) {
    RETURN_IF_ERROR(InjectFault(*fault, fault->seq, hooks));
  }
  ASSIGN_OR_RETURN(core::GroupResult result, MeasureUnrefused(runner, request, faults, hooks));
  for (const core::ItemOutcome& outcome : result.outcomes) {
    if (core::IsContextLost(outcome.status)) return outcome.status;
  }
  return result;
}

wp::Response Answer(device::Runner& runner, const wp::Request& request,
                    const std::vector<WorkerFault>& faults, const WorkerHooks& hooks) {
  wp::Response response;
  response.set_id(request.id());
  absl::Status status;
  if (request.has_begin_job()) {
    absl::StatusOr<core::TimingOptions> timing = wire::FromProto(request.begin_job().timing());
    status = timing.ok() ? runner.BeginJob(*timing) : timing.status();
  } else if (request.has_measure_group()) {
    absl::StatusOr<core::GroupResult> g =
        MeasureGroup(runner, request.measure_group(), faults, hooks);
    if (g.ok()) *response.mutable_group() = ToProto(*g);
    status = g.status();
  } else {
    status = absl::InvalidArgumentError("the run channel takes BeginJob and MeasureGroup only");
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
