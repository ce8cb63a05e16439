// The real gemmprofd (host backend, one worker process) and the real CLI, with faults
// injected into the worker through GEMMPROF_WORKER_FAULT (docs/measurement.md "Faults"):
// a transient fault costs a retry, one that comes back costs its group, a hang costs its
// group and seconds, cancel ends a job in seconds, and a device whose worker cannot start
// is unavailable until one does.
#include <grpcpp/create_channel.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>
#include <sstream>
#include <thread>

#include "gemmprof/v1/gemmprof.grpc.pb.h"
#include "tests/integration/process.h"
#include "tests/support/temp_dir.h"

namespace gemmprof::testing {
namespace {

// Waits up to `seconds` for `done`; true when it came.
template <typename Pred>
bool WaitFor(Pred done, double seconds = 30) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (std::chrono::steady_clock::now() < deadline) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return done();
}

// 16 items of 2^21 multiply-adds or so: a job of a few seconds on the host reference. One
// M, so the shapes may share batches (a shape list is batched by M).
const std::vector<std::string> kSixteenItems = {
    "--shapes",
    "128x64x128,128x72x128,128x80x128,128x88x128,128x96x128,128x104x128,"
    "128x112x128,128x120x128",
    "--recipes",
    "bf16,fp8-current",
    "--num-warmup",
    "0",
    "--num-iters",
    "2"};

class WorkerFaultTest : public ::testing::Test {
 protected:
  // Starts gemmprofd with GEMMPROF_WORKER_FAULT=`fault` and `flags`; false when it did
  // not come up.
  // Most tests follow faults group by group: one measurement group per batch.
  bool StartDaemon(const std::string& fault, std::vector<std::string> flags = {},
                   const std::string& batch_groups = "1") {
    const std::string port_file = dir_.File("port");
    std::vector<std::string> argv = {
        GEMMPROFD_PATH, "--listen", "127.0.0.1:0", "--db",    dir_.File("results.db"),
        "--backend",    "host",     "--port-file", port_file, "--batch-groups",
        batch_groups};
    argv.insert(argv.end(), flags.begin(), flags.end());
    daemon_ = std::make_unique<Process>(argv, log_path(),
                                        std::vector<std::string>{"GEMMPROF_WORKER_FAULT=" + fault});
    if (!WaitFor([&] { return !Slurp(port_file).empty(); })) return false;
    const std::string port = Slurp(port_file);
    address_ = "127.0.0.1:" + port.substr(0, port.find('\n'));
    stub_ =
        v1::GemmProf::NewStub(grpc::CreateChannel(address_, grpc::InsecureChannelCredentials()));
    return true;
  }

  std::string log_path() const { return dir_.File("gemmprofd.log"); }

  CommandResult Cli(std::vector<std::string> args) {
    args.insert(args.begin(), {GEMMPROF_CLI_PATH, "--server", address_});
    return RunCommand(args);
  }

  int64_t Submit(std::vector<std::string> args) {
    args.insert(args.begin(), "submit");
    auto r = Cli(args);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return r.out.empty() ? 0 : std::stoll(r.out);
  }

  v1::Report Report(int64_t job_id) {
    grpc::ClientContext ctx;
    v1::GetReportRequest req;
    req.set_job_id(job_id);
    v1::Report report;
    auto s = stub_->GetReport(&ctx, req, &report);
    EXPECT_TRUE(s.ok()) << s.error_message();
    return report;
  }

  bool Ended(int64_t job_id) {
    const std::string state = Report(job_id).job().state();
    return state != "queued" && state != "running";
  }

  TempDir dir_;
  std::unique_ptr<Process> daemon_;
  std::string address_;
  std::unique_ptr<v1::GemmProf::Stub> stub_;
};

// Seconds since `t`.
double Since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

constexpr char kRetriedNote[] = "measured again after a worker fault (";

TEST_F(WorkerFaultTest, AWorkerKilledFromOutsideIsRetriedAndTheDaemonKeepsServing) {
  // Item 5 hangs in the first worker that meets it (once), so the test can kill that
  // worker while it holds the item; the restarted worker measures it.
  ASSERT_TRUE(StartDaemon("hang@5:once")) << Slurp(log_path());
  const int64_t id = Submit(kSixteenItems);
  ASSERT_TRUE(WaitFor([&] {
    const auto report = Report(id);
    return report.items_size() == 16 && report.items(5).status() == "running";
  })) << Slurp(log_path());
  const std::vector<pid_t> workers = daemon_->Children();
  ASSERT_EQ(workers.size(), 1u);
  // The device is stuck; the daemon answers anyway, through the API and the CLI.
  grpc::ClientContext ctx;
  v1::ListJobsResponse jobs;
  ASSERT_TRUE(stub_->ListJobs(&ctx, v1::ListJobsRequest(), &jobs).ok());
  EXPECT_EQ(jobs.jobs_size(), 1);
  auto cli_jobs = Cli({"jobs"});
  EXPECT_EQ(cli_jobs.exit_code, 0) << cli_jobs.err;

  ASSERT_EQ(kill(workers[0], SIGKILL), 0);
  ASSERT_TRUE(WaitFor([&] { return Ended(id); })) << Slurp(log_path());
  const auto report = Report(id);
  EXPECT_EQ(report.job().state(), "succeeded") << report.job().error();
  ASSERT_EQ(report.items_size(), 16);
  // Item 5 is measured with the other recipes of its GEMM (128x80x128): that group is
  // what the killed worker held, and it alone was measured again.
  for (const auto& item : report.items()) {
    EXPECT_EQ(item.status(), "done") << item.seq() << ": " << item.error();
    const bool retried = item.result().notes().find(kRetriedNote) != std::string::npos;
    EXPECT_EQ(retried, item.op().shape().k() == 80) << item.seq() << ": " << item.result().notes();
    if (item.op().shape().k() == 80) {
      EXPECT_NE(item.result().notes().find(
                    "measured again after a worker fault (worker exited: signal 9 (Killed); the "
                    "worker restarts)"),
                std::string::npos)
          << item.result().notes();
    }
  }
  const std::vector<pid_t> now = daemon_->Children();
  ASSERT_EQ(now.size(), 1u) << "one new worker";
  EXPECT_NE(now[0], workers[0]);
  EXPECT_NE(Slurp(log_path()).find("signal 9 (Killed); starting a new one"), std::string::npos)
      << Slurp(log_path());
}

TEST_F(WorkerFaultTest, ATransientFaultMidJobCostsOneRetryAndTheJobSucceeds) {
  // One measurement group per batch; the first worker to meet item 5 kills itself.
  ASSERT_TRUE(StartDaemon("kill@5:once")) << Slurp(log_path());
  const int64_t id = Submit(kSixteenItems);
  ASSERT_TRUE(WaitFor([&] { return Ended(id); })) << Slurp(log_path());
  const auto report = Report(id);
  EXPECT_EQ(report.job().state(), "succeeded") << report.job().error();
  int retried = 0;
  for (const auto& item : report.items()) {
    EXPECT_EQ(item.status(), "done") << item.seq() << ": " << item.error();
    if (item.result().notes().find(kRetriedNote) != std::string::npos) ++retried;
  }
  EXPECT_EQ(retried, 2) << "the two items of item 5's group, measured once more";
}

TEST_F(WorkerFaultTest, AFaultThatComesBackFailsOnlyItsGroupAfterABisection) {
  // Default batches: 8 shapes in 2 batches of 4 GEMMs, packed by work (K 120, 96, 88, 64
  // and K 112, 104, 80, 72). Item 5 (128x80x128) kills every worker that meets it: its
  // batch is retried, then halved until 128x80x128 is alone.
  ASSERT_TRUE(StartDaemon("kill@5", {}, "6")) << Slurp(log_path());
  const int64_t id = Submit(kSixteenItems);
  ASSERT_TRUE(WaitFor([&] { return Ended(id); }, 60)) << Slurp(log_path());
  const auto report = Report(id);
  EXPECT_EQ(report.job().state(), "partial");
  EXPECT_EQ(report.job().error(), "2 of 16 items failed");
  for (const auto& item : report.items()) {
    const int64_t k = item.op().shape().k();
    if (k == 80) {
      EXPECT_EQ(item.status(), "failed") << k;
      EXPECT_EQ(item.error(), "fprop 128x80x128 " + item.recipe() +
                                  " autocast: worker exited: signal 9 (Killed); the worker "
                                  "restarts; reproduced on retry; the item failed and the job "
                                  "goes on with its next item");
    } else {
      EXPECT_EQ(item.status(), "done") << k << ": " << item.error();
      // The three other GEMMs of the faulty batch were measured again.
      const bool retried = item.result().notes().find(kRetriedNote) != std::string::npos;
      EXPECT_EQ(retried, k == 112 || k == 104 || k == 72) << k << ": " << item.result().notes();
    }
  }
  // The restarted worker serves the next job.
  const int64_t next = Submit({"--shapes", "64x64x64", "--recipes", "bf16", "--num-iters", "2"});
  ASSERT_TRUE(WaitFor([&] { return Ended(next); })) << Slurp(log_path());
  EXPECT_EQ(Report(next).job().state(), "succeeded");
}

TEST_F(WorkerFaultTest, AHangMidBatchFailsItsGroupInSecondsAndTheRestIsMeasured) {
  // Item 5 (128x80x128) stops making progress in the middle of its batch (after the
  // batch's first GEMMs were measured): the watchdog sees no step for 10 s.
  ASSERT_TRUE(StartDaemon("hang@5", {}, "6")) << Slurp(log_path());
  const int64_t id = Submit(kSixteenItems);
  std::optional<std::chrono::steady_clock::time_point> hung;
  ASSERT_TRUE(WaitFor(
      [&] {
        const auto report = Report(id);
        if (report.items_size() == 16 && !hung && report.items(5).status() == "running")
          hung = std::chrono::steady_clock::now();
        return report.items_size() == 16 && report.items(5).status() == "failed";
      },
      60))
      << Slurp(log_path());
  ASSERT_TRUE(hung.has_value());
  const double detected_s = Since(*hung);
  // The batch's items all read running from the start of the batch: this bounds the time
  // from the hang from above.
  EXPECT_LT(detected_s, 30) << Slurp(log_path());
  ASSERT_TRUE(WaitFor([&] { return Ended(id); })) << Slurp(log_path());
  const auto report = Report(id);
  EXPECT_EQ(report.job().state(), "partial");
  EXPECT_EQ(report.job().error(), "2 of 16 items failed");
  for (const auto& item : report.items()) {
    if (item.op().shape().k() == 80) {
      EXPECT_EQ(item.status(), "failed");
      EXPECT_EQ(item.error(), "fprop 128x80x128 " + item.recipe() +
                                  " autocast: hung: no progress for 10 s; the worker was killed "
                                  "and restarts; the item failed and the job goes on with its "
                                  "next item");
    } else {
      EXPECT_EQ(item.status(), "done") << item.seq() << ": " << item.error();
    }
  }
  // The next job starts at once on the restarted worker.
  const auto next_start = std::chrono::steady_clock::now();
  const int64_t next = Submit({"--shapes", "64x64x64", "--recipes", "bf16", "--num-iters", "2"});
  ASSERT_TRUE(WaitFor([&] { return Ended(next); })) << Slurp(log_path());
  EXPECT_EQ(Report(next).job().state(), "succeeded");
  EXPECT_LT(Since(next_start), 10);
  EXPECT_NE(Slurp(log_path()).find("no progress for 10 s"), std::string::npos);
}

TEST_F(WorkerFaultTest, CancelDuringAHangEndsTheJobInSeconds) {
  ASSERT_TRUE(StartDaemon("hang@5")) << Slurp(log_path());
  const int64_t id = Submit(kSixteenItems);
  ASSERT_TRUE(WaitFor([&] {
    const auto report = Report(id);
    return report.items_size() == 16 && report.items(5).status() == "running";
  })) << Slurp(log_path());
  const auto asked = std::chrono::steady_clock::now();
  auto cancel = Cli({"cancel", std::to_string(id)});
  const double took_s = Since(asked);
  EXPECT_EQ(cancel.exit_code, 0) << cancel.err;
  EXPECT_NE(cancel.out.find("job " + std::to_string(id) + ": cancelled"), std::string::npos)
      << cancel.out;
  EXPECT_LT(took_s, 5) << "the hung worker is killed 2 s after the cancel";
  const auto report = Report(id);
  EXPECT_EQ(report.job().state(), "cancelled");
  for (const auto& item : report.items()) {
    if (item.op().shape().k() == 80) {
      EXPECT_EQ(item.status(), "cancelled");
      EXPECT_EQ(item.error(),
                "cancelled by request; the worker did not stop within 2 s, so it was killed and "
                "restarts");
    } else {
      EXPECT_TRUE(item.status() == "done" || item.status() == "cancelled") << item.status();
    }
  }
  // The next job runs on the restarted worker.
  const int64_t next = Submit({"--shapes", "64x64x64", "--recipes", "bf16", "--num-iters", "2"});
  ASSERT_TRUE(WaitFor([&] { return Ended(next); })) << Slurp(log_path());
  EXPECT_EQ(Report(next).job().state(), "succeeded");
}

TEST_F(WorkerFaultTest, CancelStopsAWorkingMeasurementAtARoundBoundary) {
  ASSERT_TRUE(StartDaemon("")) << Slurp(log_path());
  // A GEMM near the host reference's size limit, so its measurement lasts seconds (each
  // round a fraction of one): the cancel comes mid-measurement, not between batches.
  const int64_t id = Submit({"--shapes", "640x640x640", "--recipes", "bf16,fp8-current",
                             "--num-warmup", "0", "--num-iters", "5"});
  ASSERT_TRUE(WaitFor([&] {
    const auto report = Report(id);
    return report.items_size() == 2 && report.items(0).status() == "running";
  })) << Slurp(log_path());
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  const pid_t worker = daemon_->Children().at(0);
  const auto asked = std::chrono::steady_clock::now();
  auto cancel = Cli({"cancel", std::to_string(id)});
  EXPECT_EQ(cancel.exit_code, 0) << cancel.err;
  EXPECT_LT(Since(asked), 2) << cancel.out;
  EXPECT_EQ(Report(id).job().state(), "cancelled");
  EXPECT_EQ(daemon_->Children(), std::vector<pid_t>{worker}) << "the worker stopped by itself";
  // The worker's own log line may reach the file a moment after the job ended.
  EXPECT_TRUE(WaitFor(
      [&] {
        return Slurp(log_path()).find("stopping at the next step boundary") != std::string::npos;
      },
      5))
      << Slurp(log_path());
}

TEST_F(WorkerFaultTest, CancelWaitIsValidatedAndZeroReturnsAtOnce) {
  ASSERT_TRUE(StartDaemon("")) << Slurp(log_path());
  for (const char* bad : {"-1", "nan", "3601", "soon"}) {
    auto r = Cli({"cancel", "1", "--wait", bad});
    EXPECT_EQ(r.exit_code, 2) << bad << ": " << r.err;
    EXPECT_NE(r.err.find("--wait"), std::string::npos) << bad << ": " << r.err;
  }
  auto unknown = Cli({"cancel", "999", "--wait", "0"});
  EXPECT_EQ(unknown.exit_code, 1) << unknown.err;
  EXPECT_NE(unknown.err.find("999"), std::string::npos) << unknown.err;
}

TEST_F(WorkerFaultTest, AHungItemTimesOutWithTheReasonAndTheNextItemRuns) {
  ASSERT_TRUE(StartDaemon("hang@1", {"--item-timeout", "1"})) << Slurp(log_path());
  const int64_t id = Submit({"--shapes", "64x64x64,96x96x96", "--recipes", "bf16", "--num-warmup",
                             "0", "--num-iters", "2"});
  ASSERT_TRUE(WaitFor([&] { return Ended(id); })) << Slurp(log_path());
  const auto report = Report(id);
  EXPECT_EQ(report.job().state(), "partial");
  ASSERT_EQ(report.items_size(), 2);
  EXPECT_EQ(report.items(0).status(), "done");
  EXPECT_EQ(report.items(1).status(), "failed");
  // The group's bound: the item's 1 s plus the fixed slack a group gets. The larger
  // shape runs first, so the 64x64x64 item is still to run.
  EXPECT_EQ(report.items(1).error(),
            "fprop 96x96x96 bf16 autocast: timed out after 6 s; the worker was killed and "
            "restarts; the item failed and the job goes on with its next item");
  // The restarted worker takes the next job.
  const int64_t next = Submit(
      {"--shapes", "48x48x48", "--recipes", "bf16", "--num-warmup", "0", "--num-iters", "2"});
  ASSERT_TRUE(WaitFor([&] { return Ended(next); }));
  EXPECT_EQ(Report(next).job().state(), "succeeded");
}

TEST_F(WorkerFaultTest, AWorkerThatCannotStartLeavesTheDeviceUnavailableAndReadsWorking) {
  // A short grace: the test's open connection holds a shutdown for all of it.
  ASSERT_TRUE(StartDaemon("exit-at-start", {"--shutdown-grace", "0.2"})) << Slurp(log_path());
  auto devices = Cli({"devices"});
  ASSERT_EQ(devices.exit_code, 0) << devices.err;
  EXPECT_NE(devices.out.find("UNAVAILABLE: device 0 (host-reference (CPU)) is unavailable: its "
                             "worker failed to start 3 times in a row (last: worker exited with "
                             "status 3)"),
            std::string::npos)
      << devices.out;
  auto jobs = Cli({"jobs"});
  EXPECT_EQ(jobs.exit_code, 0) << jobs.err;
  EXPECT_EQ(jobs.out, "no jobs\n");

  auto submit = Cli({"submit", "--shapes", "64", "--recipes", "bf16"});
  EXPECT_NE(submit.exit_code, 0);
  EXPECT_NE(submit.err.find("no device is available to run jobs"), std::string::npos) << submit.err;
  EXPECT_EQ(std::count(submit.err.begin(), submit.err.end(), '\n'), 1) << submit.err;
  grpc::ClientContext ctx;
  v1::SubmitJobRequest req;
  req.mutable_shapes()->add_shapes()->set_m(64);
  req.mutable_shapes()->mutable_shapes(0)->set_k(64);
  req.mutable_shapes()->mutable_shapes(0)->set_n(64);
  v1::SubmitJobResponse resp;
  EXPECT_EQ(stub_->SubmitJob(&ctx, req, &resp).error_code(), grpc::StatusCode::UNAVAILABLE);
  EXPECT_TRUE(daemon_->Children().empty()) << "no worker left behind";
  const int status = daemon_->StopWith(SIGTERM);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
}

TEST_F(WorkerFaultTest, AnUnavailableDeviceComesBackOnceItsWorkerStarts) {
  // The first four starts exit: three make the device unavailable, the first probe (after
  // 1 s) fails too, the next (2 s later) starts.
  ASSERT_TRUE(StartDaemon("exit-at-start:4")) << Slurp(log_path());
  ASSERT_TRUE(WaitFor(
      [&] { return Slurp(log_path()).find("is available again") != std::string::npos; }, 60))
      << Slurp(log_path());
  const std::string log = Slurp(log_path());
  EXPECT_NE(log.find("is unavailable: its worker failed to start 3 times in a row"),
            std::string::npos)
      << log;
  auto devices = Cli({"devices"});
  ASSERT_EQ(devices.exit_code, 0) << devices.err;
  EXPECT_EQ(devices.out.find("UNAVAILABLE"), std::string::npos) << devices.out;
  const int64_t id = Submit({"--shapes", "64x64x64", "--recipes", "bf16", "--num-iters", "2"});
  ASSERT_TRUE(WaitFor([&] { return Ended(id); })) << Slurp(log_path());
  EXPECT_EQ(Report(id).job().state(), "succeeded");
}

// The store's disk fills up in the middle of a job, and space comes back: the job waits
// and ends with every item done once. The daemon runs in a mount namespace of its own on a
// small tmpfs (unshare -rm); where this system allows no such namespace, the test skips.
TEST_F(WorkerFaultTest, AFullDiskUnderSqliteCostsWaitingNotResults) {
  const std::string mnt = dir_.File("disk"), port_file = dir_.File("port");
  const std::string fill = dir_.File("fill"), filled = dir_.File("filled");
  const std::string free_ = dir_.File("free"), freed = dir_.File("freed");
  std::filesystem::create_directories(mnt);
  // A helper inside the namespace fills the tmpfs when told to (files in the test's own
  // directory, which both sides see), and frees it again.
  const std::string script =
      "mount -t tmpfs -o size=8m tmpfs " + mnt + " || exit 97; (while [ ! -e " + fill +
      " ]; do sleep 0.05; done; dd if=/dev/zero of=" + mnt + "/filler bs=64k 2>/dev/null; " +
      "touch " + filled + "; while [ ! -e " + free_ + " ]; do sleep 0.05; done; rm -f " + mnt +
      "/filler; touch " + freed + ") & exec " + GEMMPROFD_PATH +
      " --listen 127.0.0.1:0 --backend host --batch-groups 1 --db " + mnt +
      "/results.db --port-file " + port_file;
  daemon_ = std::make_unique<Process>(
      std::vector<std::string>{"/usr/bin/unshare", "-rm", "/bin/sh", "-c", script}, log_path());
  if (!WaitFor([&] { return !Slurp(port_file).empty(); }, 10)) {
    GTEST_SKIP() << "no mount namespace with a tmpfs here: " << Slurp(log_path());
  }
  const std::string port = Slurp(port_file);
  address_ = "127.0.0.1:" + port.substr(0, port.find('\n'));
  stub_ = v1::GemmProf::NewStub(grpc::CreateChannel(address_, grpc::InsecureChannelCredentials()));
  std::vector<std::string> args = kSixteenItems;
  args.back() = "300";
  const int64_t id = Submit(args);
  ASSERT_TRUE(WaitFor([&] { return Report(id).job().finished_items() >= 2; })) << Slurp(log_path());
  std::ofstream(fill).put('\n');
  ASSERT_TRUE(WaitFor([&] { return std::filesystem::exists(filled); }));
  // The next result cannot be written: the job waits for the store.
  ASSERT_TRUE(WaitFor([&] {
    return Slurp(log_path()).find("the result store is unavailable") != std::string::npos;
  })) << Slurp(log_path());
  EXPECT_NE(Slurp(log_path()).find("database or disk is full"), std::string::npos)
      << Slurp(log_path());
  std::ofstream(free_).put('\n');
  ASSERT_TRUE(WaitFor([&] { return std::filesystem::exists(freed); }));
  ASSERT_TRUE(WaitFor([&] { return Ended(id); }, 60)) << Slurp(log_path());
  const auto report = Report(id);
  EXPECT_EQ(report.job().state(), "succeeded") << report.job().error();
  std::set<int64_t> ids;
  for (const auto& item : report.items()) {
    EXPECT_EQ(item.status(), "done") << item.seq() << ": " << item.error();
    ids.insert(item.id());
  }
  EXPECT_EQ(ids.size(), 16u);
  EXPECT_NE(Slurp(log_path()).find("the result store is back"), std::string::npos);
  // The daemon needs no restart: the next job runs.
  const int64_t next = Submit({"--shapes", "64x64x64", "--recipes", "bf16", "--num-iters", "2"});
  ASSERT_TRUE(WaitFor([&] { return Ended(next); })) << Slurp(log_path());
  EXPECT_EQ(Report(next).job().state(), "succeeded");
}

TEST_F(WorkerFaultTest, BadFlagsAndFaultSpecsAreRefusedAtStart) {
  for (const char* bad : {"-1", "nan", "inf", "604801", "soon"}) {
    auto r = RunCommand({GEMMPROFD_PATH, "--item-timeout", bad, "--db", ":memory:"});
    EXPECT_EQ(r.exit_code, 2) << bad;
    EXPECT_NE(r.err.find("--item-timeout"), std::string::npos) << bad << ": " << r.err;
  }
  for (const char* bad : {"hang@soon", "kill@5:twice", "exit-at-start:0"}) {
    auto r = RunCommand(
        {GEMMPROFD_PATH, "--db", ":memory:", "--backend", "host", "--listen", "127.0.0.1:0"},
        {std::string("GEMMPROF_WORKER_FAULT=") + bad});
    EXPECT_EQ(r.exit_code, 1) << bad;
    EXPECT_NE(r.err.find(std::string("GEMMPROF_WORKER_FAULT: '") + bad + "'"), std::string::npos)
        << r.err;
  }
}

}  // namespace
}  // namespace gemmprof::testing
