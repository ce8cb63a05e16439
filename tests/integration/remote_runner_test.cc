// RemoteRunner with real worker processes: the gemmprofd binary in worker mode on the host
// backend, with faults injected through GEMMPROF_WORKER_FAULT.
#include "device/worker/remote_runner.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "device/worker/fault.h"
#include "device/worker/item_deadline.h"
#include "device/worker/worker_process.h"
#include "tests/support/temp_dir.h"

namespace gemmprof::worker {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

core::WorkItem Item(int32_t seq, int64_t size = 32) {
  core::WorkItem item;
  item.id = 100 + seq;
  item.job_id = 1;
  item.seq = seq;
  item.op.name = "probe";
  item.op.shape = {size, size, size};
  item.recipe = core::Recipe::kBf16;
  return item;
}

core::TimingOptions Quick() {
  core::TimingOptions t;
  t.warmup_iters = 0;
  t.timed_iters = 2;
  t.gpu_warmup_s = 0;
  return t;
}

std::unique_ptr<RemoteRunner> StartRunner(const std::string& fault, double item_timeout_s = 0,
                                          const std::string& log_file = "") {
  WorkerOptions o;
  o.executable = GEMMPROFD_PATH;
  o.backend = "host";
  o.env = EnvironmentWith(kFaultEnvVar, fault);
  o.item_timeout_s = item_timeout_s;
  o.first_backoff_s = 0.01;
  o.extra_args = {"--log-level", "warn"};
  if (!log_file.empty()) o.extra_args.insert(o.extra_args.end(), {"--log-file", log_file});
  auto runner = std::make_unique<RemoteRunner>(std::move(o));
  runner->Start();
  return runner;
}

// Waits up to 10 s for `done`; true when it came.
template <typename Pred>
bool WaitFor(Pred done) {
  for (int i = 0; i < 1000; ++i) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return done();
}

TEST(RemoteRunnerTest, AWorkerMeasuresAndAnswersLikeTheRunnerItHosts) {
  auto runner = StartRunner("");
  ASSERT_TRUE(runner->Availability().ok());
  EXPECT_EQ(runner->Info().backend, "host-reference");
  EXPECT_THAT(runner->Info().name, StartsWith("host-reference (CPU: "));
  EXPECT_TRUE(runner->Supports(core::Recipe::kMxfp8).supported);
  EXPECT_GT(runner->worker_pid(), 0);
  ASSERT_TRUE(runner->BeginJob(Quick()).ok());
  auto m = device::MeasureOne(*runner, Item(0), Quick());
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(m->verification, core::Verification::kPassed);
  EXPECT_EQ(m->time.count, 2);
  EXPECT_DOUBLE_EQ(m->flops, Item(0).op.Flops());
  const absl::Status too_big = device::CanImplementOne(*runner, Item(1, 1 << 20), Quick());
  EXPECT_EQ(too_big.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(too_big.message()), HasSubstr("kMaxHostMacs"));
  EXPECT_TRUE(device::CanImplementOne(*runner, Item(1), Quick()).ok());
  EXPECT_EQ(runner->restarts(), 0);
}

TEST(RemoteRunnerTest, EachWayAWorkerDiesCostsOneItemAndANewWorkerTakesTheNext) {
  auto runner = StartRunner("crash@1,kill@2,exit@3");
  ASSERT_TRUE(device::MeasureOne(*runner, Item(0), Quick()).ok());
  const auto crashed = device::MeasureOne(*runner, Item(1), Quick());
  EXPECT_EQ(crashed.status().code(), absl::StatusCode::kAborted);
  EXPECT_THAT(std::string(crashed.status().message()),
              StartsWith("worker exited: signal 6 (Aborted)"));
  EXPECT_THAT(std::string(crashed.status().message()), HasSubstr("; the worker restarts"));
  const auto killed = device::MeasureOne(*runner, Item(2), Quick());
  EXPECT_EQ(killed.status().message(), "worker exited: signal 9 (Killed); the worker restarts");
  const auto exited = device::MeasureOne(*runner, Item(3), Quick());
  EXPECT_EQ(exited.status().message(), "worker exited with status 3; the worker restarts");
  auto next = device::MeasureOne(*runner, Item(4), Quick());
  EXPECT_TRUE(next.ok()) << next.status();
  EXPECT_EQ(runner->restarts(), 3);
  EXPECT_TRUE(runner->Availability().ok());
}

// A worker whose device context is lost answers the item and exits: the next item must
// go to its successor, never to the worker in its last moments.
TEST(RemoteRunnerTest, ALostContextCostsOneItemAndTheNextGoesToANewWorker) {
  auto runner = StartRunner("context-lost@1,context-lost@2");
  ASSERT_TRUE(device::MeasureOne(*runner, Item(0), Quick()).ok());
  for (int seq : {1, 2}) {
    const auto lost = device::MeasureOne(*runner, Item(seq), Quick());
    EXPECT_EQ(lost.status().code(), absl::StatusCode::kInternal) << lost.status();
    EXPECT_THAT(std::string(lost.status().message()),
                HasSubstr("; the device context is lost and the worker restarts"));
    auto next = device::MeasureOne(*runner, Item(seq + 2), Quick());
    EXPECT_TRUE(next.ok()) << next.status();
  }
  EXPECT_EQ(runner->restarts(), 2);
}

TEST(RemoteRunnerTest, AHungItemTimesOutAndTheNextOneRuns) {
  auto runner = StartRunner("hang@1", 0.5);
  const pid_t first = runner->worker_pid();
  const auto hung = device::MeasureOne(*runner, Item(1), Quick());
  EXPECT_EQ(hung.status().code(), absl::StatusCode::kDeadlineExceeded);
  // A group's bound: its item's 0.5 s plus the group slack (kGroupSlackS).
  EXPECT_EQ(hung.status().message(), "timed out after 5.5 s; the worker was killed and restarts");
  auto next = device::MeasureOne(*runner, Item(2), Quick());
  EXPECT_TRUE(next.ok()) << next.status();
  EXPECT_NE(runner->worker_pid(), first);
  EXPECT_EQ(runner->restarts(), 1);
}

TEST(RemoteRunnerTest, FitChecksNeverWaitBehindARunningItem) {
  testing::TempDir dir;
  const std::string log = dir.File("worker.log");
  auto runner = StartRunner("hang@1", 20, log);
  std::atomic<bool> run_returned{false};
  std::thread run([&] {
    (void)device::MeasureOne(*runner, Item(1), Quick());
    run_returned = true;
  });
  // The worker logs the fault as it takes the item, which then hangs for 20 s: every
  // check below must be answered meanwhile.
  ASSERT_TRUE(WaitFor([&] {
    std::ifstream in(log);
    std::stringstream text;
    text << in.rdbuf();
    return text.str().find("injecting a fault at item 1") != std::string::npos;
  }));
  for (int i = 0; i < 20; ++i) {
    EXPECT_TRUE(device::CanImplementOne(*runner, Item(2), Quick()).ok());
    EXPECT_EQ(device::CanImplementOne(*runner, Item(3, 1 << 20), Quick()).code(),
              absl::StatusCode::kInvalidArgument);
  }
  EXPECT_FALSE(run_returned) << "the checks were answered only after the item ended";
  kill(runner->worker_pid(), SIGKILL);
  run.join();
  EXPECT_TRUE(device::MeasureOne(*runner, Item(4), Quick()).ok());
}

core::GroupRequest Group(std::vector<int32_t> seqs) {
  core::GroupRequest request;
  request.group_uid = "host/j1/s" + std::to_string(seqs.front()) + "/1700000000000";
  for (int32_t seq : seqs) request.items.push_back(Item(seq));
  request.timing = Quick();
  return request;
}

TEST(RemoteRunnerTest, AGroupComesBackItemByItemWithARefusalInItsPlace) {
  auto runner = StartRunner("refuse@11");
  ASSERT_TRUE(runner->BeginJob(Quick()).ok());
  const core::GroupRequest request = Group({10, 11, 12});
  absl::StatusOr<core::GroupResult> result = runner->MeasureGroup(request);
  ASSERT_TRUE(result.ok()) << result.status();
  ASSERT_EQ(result->outcomes.size(), 3u);
  for (size_t i = 0; i < 3; ++i) EXPECT_EQ(result->outcomes[i].item_id, request.items[i].id);
  for (size_t i : {0u, 2u}) {
    const core::ItemOutcome& o = result->outcomes[i];
    EXPECT_TRUE(o.status.ok()) << o.status;
    ASSERT_TRUE(o.measurement.has_value());
    EXPECT_EQ(o.measurement->verification, core::Verification::kPassed);
    EXPECT_EQ(o.measurement->time.count, 2);
    EXPECT_DOUBLE_EQ(o.measurement->flops, request.items[i].op.Flops());
  }
  const core::ItemOutcome& refused = result->outcomes[1];
  EXPECT_EQ(refused.status.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(refused.status.message(),
            "not supported here: refused by GEMMPROF_WORKER_FAULT (refuse@11)");
  EXPECT_FALSE(refused.measurement.has_value());
  EXPECT_EQ(runner->restarts(), 0);

  // A group with nothing to refuse goes to the runner whole.
  result = runner->MeasureGroup(Group({13, 14}));
  ASSERT_TRUE(result.ok()) << result.status();
  ASSERT_EQ(result->outcomes.size(), 2u);
  EXPECT_EQ(result->outcomes[1].item_id, Item(14).id);
  EXPECT_TRUE(result->outcomes[1].measurement.has_value());
  // So does one of one item, and an item alone is refused just the same.
  result = runner->MeasureGroup(Group({11}));
  ASSERT_TRUE(result.ok()) << result.status();
  ASSERT_EQ(result->outcomes.size(), 1u);
  EXPECT_EQ(result->outcomes[0].status.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(device::MeasureOne(*runner, Item(11), Quick()).status().code(),
            absl::StatusCode::kFailedPrecondition);
}

TEST(RemoteRunnerTest, AWorkerThatDiesInAGroupFailsTheWholeGroupAndANewWorkerTakesTheNext) {
  auto runner = StartRunner("crash@21,kill@25");
  const auto crashed = runner->MeasureGroup(Group({20, 21, 22}));
  EXPECT_EQ(crashed.status().code(), absl::StatusCode::kAborted);
  EXPECT_THAT(std::string(crashed.status().message()),
              StartsWith("worker exited: signal 6 (Aborted)"));
  EXPECT_THAT(std::string(crashed.status().message()), HasSubstr("; the worker restarts"));
  auto next = runner->MeasureGroup(Group({23, 24}));
  ASSERT_TRUE(next.ok()) << next.status();
  EXPECT_EQ(next->outcomes.size(), 2u);
  const auto killed = runner->MeasureGroup(Group({25}));
  EXPECT_EQ(killed.status().message(), "worker exited: signal 9 (Killed); the worker restarts");
  EXPECT_TRUE(device::MeasureOne(*runner, Item(26), Quick()).ok());
  EXPECT_EQ(runner->restarts(), 2);
}

TEST(RemoteRunnerTest, ALostContextInAGroupFailsItAndTheNextGoesToANewWorker) {
  auto runner = StartRunner("context-lost@31");
  const auto lost = runner->MeasureGroup(Group({30, 31}));
  EXPECT_EQ(lost.status().code(), absl::StatusCode::kInternal) << lost.status();
  EXPECT_THAT(std::string(lost.status().message()),
              HasSubstr("; the device context is lost and the worker restarts"));
  auto next = runner->MeasureGroup(Group({32, 33}));
  EXPECT_TRUE(next.ok()) << next.status();
  EXPECT_EQ(runner->restarts(), 1);
}

TEST(RemoteRunnerTest, AHungGroupTimesOutAfterItsItemsBoundsAndTheSlack) {
  auto runner = StartRunner("hang@41", 0.5);
  const pid_t first = runner->worker_pid();
  const auto hung = runner->MeasureGroup(Group({40, 41}));
  EXPECT_EQ(hung.status().code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_EQ(hung.status().message(), "timed out after " + FormatSeconds(2 * 0.5 + kGroupSlackS) +
                                         " s; the worker was killed and restarts");
  EXPECT_TRUE(runner->MeasureGroup(Group({42})).ok());
  EXPECT_NE(runner->worker_pid(), first);
  EXPECT_EQ(runner->restarts(), 1);
}

TEST(RemoteRunnerTest, AWorkerKilledBetweenItemsIsReplacedWithoutLosingOne) {
  auto runner = StartRunner("");
  const pid_t first = runner->worker_pid();
  ASSERT_GT(first, 0);
  kill(first, SIGKILL);
  ASSERT_TRUE(WaitFor([&] {
    const pid_t now = runner->worker_pid();
    return now != 0 && now != first;
  }));
  auto m = device::MeasureOne(*runner, Item(0), Quick());
  EXPECT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(runner->restarts(), 1);
}

TEST(RemoteRunnerTest, AWorkerThatCannotStartMakesTheDeviceUnavailable) {
  auto runner = StartRunner("exit-at-start");
  const absl::Status a = runner->Availability();
  EXPECT_EQ(a.code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(a.message(),
            "device 0 (host-reference (CPU)) is unavailable: its worker failed to start 3 times "
            "in a row (last: worker exited with status 3)");
  EXPECT_EQ(runner->Info().name, "host-reference (CPU)");
  EXPECT_FALSE(runner->Supports(core::Recipe::kBf16).supported);
  EXPECT_EQ(device::MeasureOne(*runner, Item(0), Quick()).status().code(),
            absl::StatusCode::kUnavailable);
  EXPECT_EQ(runner->BeginJob(Quick()).code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(device::CanImplementOne(*runner, Item(0), Quick()).code(),
            absl::StatusCode::kUnavailable);
  EXPECT_EQ(runner->worker_pid(), 0);
}

TEST(RemoteRunnerTest, ABadFaultSpecIsAStartFailureThatSaysWhy) {
  auto runner = StartRunner("explode@1");
  EXPECT_THAT(std::string(runner->Availability().message()),
              HasSubstr("(last: GEMMPROF_WORKER_FAULT: 'explode@1' is not a fault"));
}

TEST(RemoteRunnerTest, AMissingExecutableIsNamed) {
  WorkerOptions o;
  o.executable = "/nonexistent/gemmprofd";
  o.first_backoff_s = 0.01;
  RemoteRunner runner(o);
  runner.Start();
  EXPECT_THAT(std::string(runner.Availability().message()),
              HasSubstr("worker exited with status 127 (its executable could not be started)"));
}

}  // namespace
}  // namespace gemmprof::worker
