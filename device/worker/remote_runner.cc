#include "device/worker/remote_runner.h"

#include <signal.h>
#include <spdlog/spdlog.h>
#include <sys/wait.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "core/error_detail.h"
#include "device/worker/fault.h"
#include "device/worker/item_deadline.h"
#include "device/worker/protocol.h"
#include "device/worker/worker_process.h"
#include "wire/convert.h"

namespace gemmprof::worker {
namespace {

// How long a worker that closed its channel gets to finish exiting before it is killed.
constexpr double kExitGraceS = 5;

std::chrono::duration<double> Seconds(double s) { return std::chrono::duration<double>(s); }

// Reads the answer to request `id`, skipping late answers to abandoned requests.
absl::Status ReceiveAnswer(const MessageChannel& channel, uint64_t id, double timeout_s,
                           wp::Response* response) {
  const auto deadline = std::chrono::steady_clock::now() + Seconds(timeout_s);
  for (;;) {
    const double left =
        std::chrono::duration<double>(deadline - std::chrono::steady_clock::now()).count();
    RETURN_IF_ERROR(channel.Receive(response, std::max(left, 0.0)));
    if (response->id() == id) return absl::OkStatus();
  }
}

double BackoffSeconds(const WorkerOptions& o, int failures_in_a_row) {
  const double factor = std::pow(2.0, std::max(failures_in_a_row - 1, 0));
  return std::min(o.first_backoff_s * factor, o.max_backoff_s);
}

// Reaps `pid` if it exits within `seconds`; false (still running) otherwise.
bool ReapWithin(pid_t pid, double seconds, int* status) {
  const auto deadline = std::chrono::steady_clock::now() + Seconds(seconds);
  for (;;) {
    const pid_t got = waitpid(pid, status, WNOHANG);
    if (got == pid) return true;
    if (got < 0 && errno != EINTR) return false;
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
}

core::DeviceInfo Placeholder(const WorkerOptions& o) {
  core::DeviceInfo info;
  info.backend = o.backend == "host" ? "host-reference" : o.backend;
  info.name = o.backend == "host" ? "host-reference (CPU)" : absl::StrCat("CUDA device ", o.device);
  info.gemmprof_version = GEMMPROF_VERSION;
  return info;
}

// The worker's answers to a fit check of `count` items.
absl::StatusOr<std::vector<absl::Status>> Answers(const wp::Response& response, size_t count) {
  RETURN_IF_ERROR(FromProto(response.status()));
  if (static_cast<size_t>(response.item_status_size()) != count) {
    return absl::InternalError(absl::StrCat("the worker answered ", response.item_status_size(),
                                            " of ", count, " items of a fit check"));
  }
  std::vector<absl::Status> answers;
  answers.reserve(count);
  for (const wp::Status& s : response.item_status()) answers.push_back(FromProto(s));
  return answers;
}

}  // namespace

RemoteRunner::RemoteRunner(WorkerOptions options) : options_(std::move(options)) {
  infos_.push_back(Placeholder(options_));
  info_ = &infos_.back();
}

RemoteRunner::~RemoteRunner() {
  if (!supervisor_.joinable()) return;
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
    // End-of-file on its channels makes a worker exit between items.
    for (const WorkerPtr& w : {worker_, starting_}) {
      if (w == nullptr) continue;
      w->run.Shutdown();
      w->query.Shutdown();
    }
  }
  cv_.notify_all();
  {
    std::unique_lock lock(mu_);
    if (!cv_.wait_for(lock, Seconds(kExitGraceS), [this] { return supervisor_done_; })) {
      // A worker stuck in a kernel never reads its channel again.
      for (const WorkerPtr& w : {worker_, starting_}) {
        if (w != nullptr && !w->exited) kill(w->pid, SIGKILL);
      }
    }
  }
  supervisor_.join();
}

void RemoteRunner::Start() {
  supervisor_ = std::thread([this] { Supervise(); });
  std::unique_lock lock(mu_);
  cv_.wait(lock, [this] { return started_; });
}

std::string RemoteRunner::DeviceName() const {
  return absl::StrCat("device ", options_.device, " (", Info().name, ")");
}

void RemoteRunner::Supervise() {
  int start_failures = 0;
  double backoff = 0;
  while (SleepUnlessStopping(backoff)) {
    std::string failure;
    WorkerPtr w = StartWorker(&failure);
    if (w == nullptr) {
      if (!SleepUnlessStopping(0)) break;  // a stop ended the start
      ++start_failures;
      if (start_failures <= options_.max_start_failures) {
        spdlog::warn("{}: worker failed to start (attempt {} of {}): {}", DeviceName(),
                     start_failures, options_.max_start_failures, failure);
      }
      if (start_failures == options_.max_start_failures) MarkUnavailable(failure);
      if (start_failures >= options_.max_start_failures) {
        // Unavailable: a start is tried now and then, and the first that works brings the
        // device back (a driver that recovered, a GPU reset by its owner).
        backoff = std::min(options_.probe_interval_s,
                           std::pow(2.0, start_failures - options_.max_start_failures));
        {
          std::lock_guard lock(mu_);
          started_ = true;
        }
        cv_.notify_all();
        continue;
      }
      backoff = BackoffSeconds(options_, start_failures);
      continue;
    }
    const bool was_unavailable = start_failures >= options_.max_start_failures;
    start_failures = 0;
    {
      std::lock_guard lock(mu_);
      worker_ = w;
      started_ = true;
      unavailable_ = false;
      unavailable_reason_.clear();
    }
    cv_.notify_all();
    if (was_unavailable) {
      spdlog::warn("{} is available again: worker pid {} started", DeviceName(), w->pid);
    } else {
      spdlog::info("{}: worker pid {} ready", DeviceName(), w->pid);
    }
    RecordExit(w);
    std::string exit;
    {
      std::lock_guard lock(mu_);
      if (stopping_) break;
      ++restarts_;
      backoff = BackoffSeconds(options_, ++deaths_in_a_row_);
      exit = w->exit;
    }
    spdlog::warn("{}: worker pid {}: {}; starting a new one in {} s", DeviceName(), w->pid, exit,
                 FormatSeconds(backoff));
  }
  std::lock_guard lock(mu_);
  started_ = true;
  supervisor_done_ = true;
  cv_.notify_all();
}

bool RemoteRunner::SleepUnlessStopping(double seconds) {
  std::unique_lock lock(mu_);
  if (seconds > 0) cv_.wait_for(lock, Seconds(seconds), [this] { return stopping_; });
  return !stopping_;
}

RemoteRunner::WorkerPtr RemoteRunner::StartWorker(std::string* failure) {
  std::vector<std::string> argv = {"gemmprofd", "--backend", options_.backend, "--device",
                                   std::to_string(options_.device)};
  argv.insert(argv.end(), options_.extra_args.begin(), options_.extra_args.end());
  std::vector<std::string> env = options_.env;
  {
    std::lock_guard lock(mu_);
    env.push_back(absl::StrCat(kWorkerStartEnvVar, "=", ++starts_));
  }
  absl::StatusOr<SpawnedWorker> spawned = SpawnWorker(options_.executable, argv, env);
  if (!spawned.ok()) {
    *failure = std::string(spawned.status().message());
    return nullptr;
  }
  auto w = std::make_shared<Worker>();
  w->pid = spawned->pid;
  w->run = std::move(spawned->run);
  w->query = std::move(spawned->query);
  {
    std::lock_guard lock(mu_);
    starting_ = w;
    if (stopping_) w->run.Shutdown();
  }
  wp::Hello hello;
  absl::Status got = w->run.Receive(&hello, options_.start_timeout_s);
  if (got.ok()) got = FromProto(hello.status());
  if (got.ok()) {
    absl::StatusOr<core::DeviceInfo> device = wire::FromProto(hello.device());
    std::lock_guard lock(mu_);
    starting_.reset();
    if (device.ok()) {
      // The first worker that starts describes the device, also when that comes after
      // the device was unavailable.
      if (infos_.size() == 1) {  // only the placeholder so far
        infos_.push_back(*std::move(device));
        info_ = &infos_.back();
      }
      return w;
    }
    got = device.status();
  }
  // It will not serve: make sure it is gone, then say why it did not start. One that
  // closed its channel is exiting by itself; its own exit status says more than a kill.
  int status = 0;
  if (!absl::IsUnavailable(got) || !ReapWithin(w->pid, kExitGraceS, &status)) {
    kill(w->pid, SIGKILL);
    while (waitpid(w->pid, &status, 0) < 0 && errno == EINTR) {
    }
  }
  {
    std::lock_guard lock(mu_);
    starting_.reset();
    w->exited = true;
  }
  if (absl::IsDeadlineExceeded(got)) {
    *failure = absl::StrCat("it did not report ready within ",
                            FormatSeconds(options_.start_timeout_s), " s");
  } else if (absl::IsUnavailable(got)) {
    *failure = DescribeExit(status);  // it closed its channel: it exited
  } else {
    *failure = std::string(got.message());
  }
  return nullptr;
}

void RemoteRunner::RecordExit(const WorkerPtr& w) {
  // Waits without reaping, so that Kill (which checks `exited` under mu_) can never
  // signal a recycled pid.
  siginfo_t info{};
  while (waitid(P_PID, w->pid, &info, WEXITED | WNOWAIT) != 0 && errno == EINTR) {
  }
  std::lock_guard lock(mu_);
  int status = 0;
  while (waitpid(w->pid, &status, 0) < 0 && errno == EINTR) {
  }
  w->exited = true;
  w->exit = DescribeExit(status);
  if (worker_ == w) worker_.reset();
  cv_.notify_all();
}

void RemoteRunner::MarkUnavailable(const std::string& last_failure) {
  std::string reason;
  {
    std::lock_guard lock(mu_);
    unavailable_ = true;
    unavailable_reason_ = absl::StrCat("its worker failed to start ", options_.max_start_failures,
                                       " times in a row (last: ", last_failure, ")");
    reason = unavailable_reason_;
  }
  cv_.notify_all();
  spdlog::error(
      "{} is unavailable: {}; its jobs go to other devices; a new start is tried after 1 s, "
      "then twice as long each time up to every {} s",
      DeviceName(), reason, FormatSeconds(options_.probe_interval_s));
}

void RemoteRunner::Kill(const WorkerPtr& w) const {
  std::lock_guard lock(mu_);
  if (!w->exited) kill(w->pid, SIGKILL);
}

bool RemoteRunner::AwaitExit(const WorkerPtr& w, double wait_s) const {
  std::unique_lock lock(mu_);
  const auto exited = [&w] { return w->exited; };
  if (wait_s < 0) {
    cv_.wait(lock, exited);
    return true;
  }
  return cv_.wait_for(lock, Seconds(wait_s), exited);
}

absl::StatusOr<RemoteRunner::WorkerPtr> RemoteRunner::AwaitWorker(double wait_s,
                                                                  const WorkerPtr& not_this) const {
  std::unique_lock lock(mu_);
  const auto settled = [&] {
    return (worker_ != nullptr && worker_ != not_this) || unavailable_ || stopping_;
  };
  if (wait_s < 0) {
    cv_.wait(lock, settled);
  } else if (!cv_.wait_for(lock, Seconds(wait_s), settled)) {
    return absl::UnavailableError(absl::StrCat(DeviceName(), ": its worker is restarting (",
                                               FormatSeconds(wait_s),
                                               " s without a ready worker); try again"));
  }
  if (unavailable_) {
    return absl::UnavailableError(
        absl::StrCat(DeviceName(), " is unavailable: ", unavailable_reason_));
  }
  if (stopping_) return absl::UnavailableError("gemmprofd is stopping");
  return worker_;
}

absl::Status RemoteRunner::Availability() const {
  std::lock_guard lock(mu_);
  if (!unavailable_) return absl::OkStatus();
  return absl::UnavailableError(
      absl::StrCat(DeviceName(), " is unavailable: ", unavailable_reason_));
}

int64_t RemoteRunner::restarts() const {
  std::lock_guard lock(mu_);
  return restarts_;
}

int64_t RemoteRunner::hangs() const {
  std::lock_guard lock(mu_);
  return hangs_;
}

double RemoteRunner::busy_seconds() const { return static_cast<double>(busy_ns_.load()) * 1e-9; }

pid_t RemoteRunner::worker_pid() const {
  std::lock_guard lock(mu_);
  return worker_ != nullptr ? worker_->pid : 0;
}

core::RecipeSupport RemoteRunner::Supports(core::Recipe recipe) const {
  for (const core::RecipeSupport& r : Info().recipes) {
    if (r.recipe == recipe) return r;
  }
  return core::RecipeSupport{recipe, false, absl::StrCat(DeviceName(), " has not started")};
}

absl::StatusOr<std::vector<absl::Status>> RemoteRunner::CanImplement(
    const std::vector<core::WorkItem>& items, const core::TimingOptions& timing) const {
  wp::Request request;
  request.set_id(next_request_id_++);
  *request.mutable_can_implement() = ToFitCall(items, timing);
  WorkerPtr refused;
  // Asked twice at most: a worker that dies under the question leaves it to its successor.
  for (int attempt = 0; attempt < 2; ++attempt) {
    ASSIGN_OR_RETURN(WorkerPtr w, AwaitWorker(options_.query_wait_s, refused));
    std::lock_guard query_lock(query_mu_);
    wp::Response response;
    absl::Status io;
    {
      std::lock_guard send_lock(query_send_mu_);
      io = w->query.Send(request);
    }
    if (io.ok()) io = ReceiveAnswer(w->query, request.id(), options_.query_timeout_s, &response);
    if (io.ok()) return Answers(response, items.size());
    if (absl::IsDeadlineExceeded(io)) {
      return absl::UnavailableError(
          absl::StrCat(DeviceName(), " did not answer a fit check within ",
                       FormatSeconds(options_.query_timeout_s), " s; try again"));
    }
    refused = w;
  }
  return absl::UnavailableError(
      absl::StrCat(DeviceName(), ": its worker restarted during a fit check; try again"));
}

absl::Status RemoteRunner::BeginJob(const core::TimingOptions& timing) {
  wp::Request request;
  request.set_id(next_request_id_++);
  *request.mutable_begin_job()->mutable_timing() = wire::ToProto(timing);
  wp::Response response;
  RETURN_IF_ERROR(
      Call(request, BeginJobTimeoutSeconds(timing, options_.item_timeout_s), &response));
  return FromProto(response.status());
}

absl::StatusOr<core::GroupResult> RemoteRunner::MeasureGroup(const core::GroupRequest& request) {
  wp::Request call;
  call.set_id(next_request_id_++);
  *call.mutable_measure_group() = ToGroupCall(request);
  const bool host = options_.backend == "host";
  const double timeout_s =
      GroupTimeoutSeconds(request.items, request.timing, host, options_.item_timeout_s);
  const CallWatch watch{SetupStepSeconds(request.items, request.timing, host), request.cancelled};
  wp::Response response;
  RETURN_IF_ERROR(Call(call, timeout_s, &response, &watch));
  absl::Status status = FromProto(response.status());
  if (core::IsContextLost(status)) {
    return core::AppendToMessage(status, "; the device context is lost and the worker restarts");
  }
  RETURN_IF_ERROR(status);
  return FromGroupResult(response.group(), request);
}

absl::Status RemoteRunner::Call(const wp::Request& request, double timeout_s,
                                wp::Response* response, const CallWatch* watch) {
  const auto began = std::chrono::steady_clock::now();
  struct BusyClock {
    std::atomic<int64_t>& total;
    std::chrono::steady_clock::time_point began;
    ~BusyClock() {
      total += std::chrono::duration_cast<std::chrono::nanoseconds>(
                   std::chrono::steady_clock::now() - began)
                   .count();
    }
  } busy{busy_ns_, began};
  WorkerPtr refused;
  // A worker that died before it took the request leaves it to its successor, once.
  for (int attempt = 0; attempt < 2; ++attempt) {
    ASSIGN_OR_RETURN(WorkerPtr w, AwaitWorker(-1, refused));
    if (!w->run.Send(request).ok()) {
      refused = w;
      continue;
    }
    bool handled = false;
    absl::Status io = watch != nullptr
                          ? AwaitWatched(w, request.id(), timeout_s, *watch, response, &handled)
                          : ReceiveAnswer(w->run, request.id(), timeout_s, response);
    if (handled) return io;
    if (!io.ok()) return WorkerLost(w, io, timeout_s);
    if (core::IsContextLost(FromProto(response->status()))) {
      // The worker exits after this answer. The next request must go to its successor,
      // not to this worker in its last moments (it would read as a second death).
      if (!AwaitExit(w, kExitGraceS)) {
        Kill(w);
        AwaitExit(w, -1);
      }
    }
    std::lock_guard lock(mu_);
    deaths_in_a_row_ = 0;
    return absl::OkStatus();
  }
  return absl::AbortedError("the worker died twice before it took the request");
}

absl::Status RemoteRunner::WorkerLost(const WorkerPtr& w, const absl::Status& io,
                                      double timeout_s) {
  if (absl::IsDeadlineExceeded(io)) {
    Kill(w);
    AwaitExit(w, -1);
    spdlog::warn("{}: no answer within {} s; worker pid {} killed", DeviceName(),
                 FormatSeconds(timeout_s), w->pid);
    return absl::DeadlineExceededError(absl::StrCat("timed out after ", FormatSeconds(timeout_s),
                                                    " s; the worker was killed and restarts"));
  }
  // A closed channel means the worker is ending: its exit status says how. Anything
  // else (a corrupt frame) leaves a worker that cannot be trusted.
  if (!absl::IsUnavailable(io) || !AwaitExit(w, kExitGraceS)) {
    Kill(w);
    AwaitExit(w, -1);
  }
  std::string exit;
  {
    std::lock_guard lock(mu_);
    exit = w->exit;
  }
  if (!absl::IsUnavailable(io)) {
    spdlog::error("{}: worker pid {} sent a bad answer ({}); killed", DeviceName(), w->pid,
                  io.ToString());
    return absl::InternalError("the worker sent a corrupt answer; it was killed and restarts");
  }
  return absl::AbortedError(absl::StrCat(exit, "; the worker restarts"));
}

}  // namespace gemmprof::worker
