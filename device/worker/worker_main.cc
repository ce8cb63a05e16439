#include "device/worker/worker_main.h"

#include <signal.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/error_detail.h"
#include "core/group.h"
#include "core/progress.h"
#include "device/worker/channel.h"
#include "device/worker/fault.h"
#include "device/worker/protocol.h"
#include "wire/convert.h"

namespace gemmprof::worker {
namespace {

// How often a running measure_group call sends its progress (wp::Progress).
constexpr double kHeartbeatS = 0.25;

// The measure_group call in flight on the run channel, for a cancel on the query channel.
class CallInFlight {
 public:
  void Begin(uint64_t request_id, core::MeasureProgress* progress) {
    std::lock_guard lock(mu_);
    request_id_ = request_id;
    progress_ = progress;
  }
  void End() { Begin(0, nullptr); }
  // Asks call `request_id` to stop, if it is the one in flight; false otherwise.
  bool Cancel(uint64_t request_id) {
    std::lock_guard lock(mu_);
    if (progress_ == nullptr || request_id != request_id_) return false;
    progress_->RequestCancel();
    return true;
  }

 private:
  std::mutex mu_;
  uint64_t request_id_ = 0;
  core::MeasureProgress* progress_ = nullptr;
};

// The run channel is written by the answering loop and by a call's heartbeat thread.
class RunSender {
 public:
  explicit RunSender(const MessageChannel& channel) : channel_(channel) {}
  absl::Status Send(const google::protobuf::MessageLite& message) {
    std::lock_guard lock(mu_);
    return channel_.Send(message);
  }

 private:
  const MessageChannel& channel_;
  std::mutex mu_;
};

// Answers CanImplement, and Cancel for the call in flight, until the daemon closes the
// query channel. Runs beside the run loop: Runner::CanImplement is safe against a
// concurrent MeasureGroup (see runner.h).
void ServeQueries(const MessageChannel& channel, const device::Runner& runner,
                  CallInFlight& in_flight) {
  wp::Request request;
  while (channel.Receive(&request, -1).ok()) {
    wp::Response response;
    response.set_id(request.id());
    if (request.has_cancel()) {
      const bool cancelling = in_flight.Cancel(request.cancel().request_id());
      spdlog::info("cancel of request {}: {}", request.cancel().request_id(),
                   cancelling ? "stopping at the next step boundary" : "not in flight");
      *response.mutable_status() = ToProto(absl::OkStatus());
      if (!channel.Send(response).ok()) return;
      continue;
    }
    std::vector<core::WorkItem> items;
    core::TimingOptions timing;
    absl::Status status =
        request.has_can_implement()
            ? FromFitCall(request.can_implement(), &items, &timing)
            : absl::InvalidArgumentError("the query channel takes CanImplement and Cancel only");
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
      // On a GPU, a kernel that never ends: the device stops, as with a real hang.
      if (hooks.hang) (void)hooks.hang();
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

// The faults that meet each item's measurement group, by item id: a fault @SEQ but
// refuse meets every item of the group holding item SEQ.
std::map<int64_t, WorkerFault> FaultsByItem(const std::vector<core::WorkItem>& items,
                                            const std::vector<WorkerFault>& faults) {
  std::map<int64_t, WorkerFault> out;
  for (const std::vector<size_t>& group : core::GroupItems(items)) {
    std::vector<int32_t> seqs;
    for (size_t i : group) seqs.push_back(items[i].seq);
    if (std::optional<WorkerFault> f = FaultForGroup(faults, seqs)) {
      for (size_t i : group) out.emplace(items[i].id, *f);
    }
  }
  return out;
}

// Where ":once" faults leave their marker: the temporary directory.
std::string FaultStateDir() {
  const char* tmp = std::getenv("TMPDIR");
  return tmp != nullptr && *tmp != '\0' ? tmp : "/tmp";
}

// Sends `progress` as the heartbeat of call `id` every kHeartbeatS until stopped.
class Heartbeat {
 public:
  Heartbeat(RunSender& sender, uint64_t id, const core::MeasureProgress& progress)
      : thread_([this, &sender, id, &progress] {
          std::unique_lock lock(mu_);
          while (!cv_.wait_for(lock, std::chrono::duration<double>(kHeartbeatS),
                               [this] { return stop_; })) {
            wp::Response beat;
            beat.set_id(id);
            wp::Progress& p = *beat.mutable_progress();
            p.set_steps(progress.steps());
            p.set_item_id(progress.item_id());
            p.set_slowest_step_ms(progress.slowest_step_ms());
            if (!sender.Send(beat).ok()) return;
          }
        }) {}
  ~Heartbeat() {
    {
      std::lock_guard lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::thread thread_;  // last: starts once the members above exist
};

// Measures a group call with a heartbeat on the run channel and the fault hooks at the
// runner's Enter: a fault @SEQ but refuse fires when the runner begins the work of the
// group holding item SEQ. A lost context in one item's outcome is lost for every item:
// it fails the call, so that the worker exits after answering.
absl::StatusOr<core::GroupResult> MeasureGroup(device::Runner& runner, const wp::Request& call,
                                               const std::vector<WorkerFault>& faults,
                                               const WorkerHooks& hooks, RunSender& sender,
                                               CallInFlight& in_flight) {
  ASSIGN_OR_RETURN(core::GroupRequest request, FromGroupCall(call.measure_group()));
  const std::map<int64_t, WorkerFault> faults_by_item = FaultsByItem(request.items, faults);
  std::set<int32_t> fired;  // one firing per fault and call
  const std::string state_dir = FaultStateDir();
  core::MeasureProgress progress([&](int64_t item_id) -> absl::Status {
    const auto it = faults_by_item.find(item_id);
    if (it == faults_by_item.end() || !fired.insert(it->second.seq).second) {
      return absl::OkStatus();
    }
    if (!ClaimFault(it->second, state_dir, getppid())) return absl::OkStatus();
    return InjectFault(it->second, it->second.seq, hooks);
  });
  request.progress = &progress;
  in_flight.Begin(call.id(), &progress);
  absl::StatusOr<core::GroupResult> result;
  {
    Heartbeat beat(sender, call.id(), progress);
    result = MeasureUnrefused(runner, request, faults, hooks);
  }
  in_flight.End();
  if (!result.ok()) return result.status();
  for (const core::ItemOutcome& outcome : result->outcomes) {
    if (core::IsContextLost(outcome.status)) return outcome.status;
  }
  return result;
}

wp::Response Answer(device::Runner& runner, const wp::Request& request,
                    const std::vector<WorkerFault>& faults, const WorkerHooks& hooks,
                    RunSender& sender, CallInFlight& in_flight) {
  wp::Response response;
  response.set_id(request.id());
  absl::Status status;
  if (request.has_begin_job()) {
    absl::StatusOr<core::TimingOptions> timing = wire::FromProto(request.begin_job().timing());
    status = timing.ok() ? runner.BeginJob(*timing) : timing.status();
  } else if (request.has_measure_group()) {
    absl::StatusOr<core::GroupResult> g =
        MeasureGroup(runner, request, faults, hooks, sender, in_flight);
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
  const char* start_text = std::getenv(kWorkerStartEnvVar);
  const int64_t start = start_text != nullptr ? std::atoll(start_text) : 1;
  if (ExitsAtStart(*faults, start)) {
    spdlog::warn("{} is set: exiting at start {}", kFaultEnvVar, start);
    return kFaultExitStatus;
  }
  absl::StatusOr<std::unique_ptr<device::Runner>> runner = hooks.make_runner();
  if (!runner.ok()) return FailStart(run, runner.status(), kExitRunnerFailed);
  wp::Hello hello;
  hello.set_pid(getpid());
  *hello.mutable_device() = wire::ToProto((*runner)->Info());
  if (!run.Send(hello).ok()) return 0;
  CallInFlight in_flight;
  RunSender sender(run);
  std::thread queries([&] { ServeQueries(query, **runner, in_flight); });
  wp::Request request;
  while (run.Receive(&request, -1).ok()) {
    const wp::Response response = Answer(**runner, request, *faults, hooks, sender, in_flight);
    if (!sender.Send(response).ok()) break;
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
