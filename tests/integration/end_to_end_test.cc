// The real gemmprofd process (host reference backend) driven by the real gemmprof CLI.
#include <grpcpp/create_channel.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>

#include <chrono>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <thread>

#include "gemmprof/v1/gemmprof.grpc.pb.h"
#include "tests/integration/process.h"
#include "tests/support/temp_dir.h"

namespace gemmprof::testing {
namespace {

class EndToEndTest : public ::testing::Test {
 protected:
  void SetUp() override { StartDaemon(); }

  void StartDaemon() {
    const std::string port_file = dir_.File("port");
    std::remove(port_file.c_str());
    daemon_ = std::make_unique<Process>(
        std::vector<std::string>{GEMMPROFD_PATH, "--listen", "127.0.0.1:0", "--db",
                                 dir_.File("results.db"), "--backend", "host", "--port-file",
                                 port_file},
        log_path());
    for (int i = 0; i < 200 && Slurp(port_file).empty(); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    const std::string port = Slurp(port_file);
    ASSERT_FALSE(port.empty()) << "gemmprofd did not start:\n" << Slurp(log_path());
    address_ = "127.0.0.1:" + port.substr(0, port.find('\n'));
    stub_ =
        v1::GemmProf::NewStub(grpc::CreateChannel(address_, grpc::InsecureChannelCredentials()));
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
    // Without --wait, stdout is the job id and nothing else.
    if (r.out.empty()) {
      ADD_FAILURE() << "submit printed nothing; stderr: " << r.err;
      return 0;
    }
    EXPECT_EQ(r.out.back(), '\n');
    return std::stoll(r.out);
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

  TempDir dir_;
  std::unique_ptr<Process> daemon_;
  std::string address_;
  std::unique_ptr<v1::GemmProf::Stub> stub_;
};

TEST_F(EndToEndTest, SubmitWatchReportOnTheHostReferenceRunner) {
  auto devices = Cli({"devices"});
  ASSERT_EQ(devices.exit_code, 0) << devices.err;
  EXPECT_NE(devices.out.find("host-reference"), std::string::npos) << devices.out;

  const int64_t id = Submit({"--shapes", "64x128x96,80", "--recipes", "bf16,fp8-current,mxfp8",
                             "--num-warmup", "0", "--num-iters", "2"});
  auto watch = Cli({"watch", std::to_string(id)});
  ASSERT_EQ(watch.exit_code, 0) << watch.err;

  auto table = Cli({"report", std::to_string(id)});
  ASSERT_EQ(table.exit_code, 0) << table.err;
  EXPECT_NE(table.out.find("host-reference"), std::string::npos) << table.out;

  auto json = Cli({"report", std::to_string(id), "--format", "json"});
  ASSERT_EQ(json.exit_code, 0) << json.err;
  auto doc = nlohmann::json::parse(json.out, nullptr, false);
  ASSERT_FALSE(doc.is_discarded()) << json.out;

  auto report = Report(id);
  EXPECT_EQ(report.job().state(), "succeeded");
  ASSERT_EQ(report.items_size(), 6);
  for (const auto& item : report.items()) {
    EXPECT_EQ(item.status(), "done") << item.recipe() << ": " << item.error();
    EXPECT_EQ(item.result().verification(), "passed") << item.recipe();
    EXPECT_GT(item.result().time().median_ms(), 0);
  }
  auto jobs = Cli({"jobs"});
  ASSERT_EQ(jobs.exit_code, 0) << jobs.err;
  EXPECT_NE(jobs.out.find(std::to_string(id)), std::string::npos);
}

TEST_F(EndToEndTest, KillNineThenRestartKeepsResultsAndFinishesTheJob) {
  // 16 items of about 2^26 multiply-adds: long enough to kill the daemon mid-job.
  const int64_t id =
      Submit({"--shapes",
              "256x512x512,264x512x512,272x512x512,280x512x512,288x512x512,"
              "296x512x512,304x512x512,312x512x512",
              "--recipes", "bf16,fp8-current", "--num-warmup", "0", "--num-iters", "3"});
  int finished = 0;
  for (int i = 0; i < 600 && finished < 2; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    grpc::ClientContext ctx;
    v1::GetJobRequest req;
    req.set_job_id(id);
    v1::Job job;
    ASSERT_TRUE(stub_->GetJob(&ctx, req, &job).ok());
    finished = job.finished_items();
  }
  ASSERT_GE(finished, 2);
  const int status = daemon_->StopWith(SIGKILL);
  ASSERT_TRUE(WIFSIGNALED(status));
  std::map<int64_t, int64_t> measured_before;  // item id -> measured_ms
  StartDaemon();
  const auto mid = Report(id);
  ASSERT_NE(mid.job().state(), "succeeded") << "the job ended before the kill; make it longer";
  for (const auto& item : mid.items()) {
    if (item.status() == "done") measured_before[item.id()] = item.measured_ms();
  }
  EXPECT_GE(measured_before.size(), 2u) << "finished results survive kill -9";

  auto watch = Cli({"watch", std::to_string(id)});
  ASSERT_EQ(watch.exit_code, 0) << watch.err;
  const auto done = Report(id);
  EXPECT_EQ(done.job().state(), "succeeded");
  ASSERT_EQ(done.items_size(), 16);
  for (const auto& item : done.items()) {
    EXPECT_EQ(item.status(), "done") << item.id() << ": " << item.error();
    auto before = measured_before.find(item.id());
    if (before != measured_before.end()) {
      EXPECT_EQ(item.measured_ms(), before->second) << "item " << item.id() << " was run again";
    }
  }
}

TEST_F(EndToEndTest, CachedResultsAreMarkedAndForceBypassesTheCache) {
  std::vector<std::string> args = {
      "--shapes", "64x64x64,32x96x48", "--recipes", "bf16,fp8-block", "--num-iters",
      "2",        "--num-warmup",      "0",         "--wait"};
  auto first = Cli([&] {
    auto a = args;
    a.insert(a.begin(), "submit");
    return a;
  }());
  ASSERT_EQ(first.exit_code, 0) << first.err;
  auto second = Cli([&] {
    auto a = args;
    a.insert(a.begin(), "submit");
    return a;
  }());
  ASSERT_EQ(second.exit_code, 0) << second.err;
  EXPECT_NE(second.out.find("cached"), std::string::npos) << second.out;

  grpc::ClientContext ctx;
  v1::ListJobsResponse jobs;
  ASSERT_TRUE(stub_->ListJobs(&ctx, v1::ListJobsRequest(), &jobs).ok());
  ASSERT_EQ(jobs.jobs_size(), 2);
  const auto first_report = Report(jobs.jobs(1).id());
  const auto second_report = Report(jobs.jobs(0).id());
  ASSERT_EQ(second_report.items_size(), 4);
  for (int i = 0; i < 4; ++i) {
    EXPECT_FALSE(first_report.items(i).cached());
    EXPECT_TRUE(second_report.items(i).cached());
    EXPECT_EQ(second_report.items(i).result().time().median_ms(),
              first_report.items(i).result().time().median_ms());
  }
  args.push_back("--force");
  args.insert(args.begin(), "submit");
  ASSERT_EQ(Cli(args).exit_code, 0);
  grpc::ClientContext ctx2;
  ASSERT_TRUE(stub_->ListJobs(&ctx2, v1::ListJobsRequest(), &jobs).ok());
  ASSERT_EQ(jobs.jobs_size(), 3);
  const auto forced = Report(jobs.jobs(0).id());
  ASSERT_EQ(forced.items_size(), 4);
  for (const auto& item : forced.items()) EXPECT_FALSE(item.cached());
}

// Each M of a shape list is its own batch of rounds, recorded with every result; isolated
// gives every GEMM its own; the host runner measures no energy and says so.
TEST_F(EndToEndTest, ContextsAndEnergyOnTheHostReferenceRunner) {
  const std::vector<std::string> common = {"--shapes",     "16x64x96,16x96x64,64x64x64",
                                           "--recipes",    "bf16,fp8-current",
                                           "--num-iters",  "2",
                                           "--num-warmup", "0",
                                           "--wait"};
  auto submit = [&](std::vector<std::string> extra) {
    std::vector<std::string> args = {"submit"};
    args.insert(args.end(), common.begin(), common.end());
    args.insert(args.end(), extra.begin(), extra.end());
    return Cli(args);
  };
  auto document = [&](int64_t id) {
    auto json = Cli({"report", std::to_string(id), "--format", "json"});
    EXPECT_EQ(json.exit_code, 0) << json.err;
    return nlohmann::json::parse(json.out, nullptr, false);
  };
  auto latest = [&] {
    grpc::ClientContext ctx;
    v1::ListJobsResponse jobs;
    EXPECT_TRUE(stub_->ListJobs(&ctx, v1::ListJobsRequest(), &jobs).ok());
    return jobs.jobs(0).id();
  };

  const CommandResult energy = submit({"--energy"});
  ASSERT_EQ(energy.exit_code, 0) << energy.err;
  const nlohmann::json doc = document(latest());
  ASSERT_EQ(doc["batches"].size(), 2u) << doc["batches"].dump();
  EXPECT_NE(doc["batches"][0]["batch_id"], doc["batches"][1]["batch_id"]);
  std::set<std::string> contexts;
  for (const auto& b : doc["batches"]) contexts.insert(b["context"].get<std::string>());
  EXPECT_EQ(contexts, (std::set<std::string>{"workload: m=16", "workload: m=64"}));
  for (const auto& item : doc["items"]) {
    const auto& r = item["result"];
    EXPECT_EQ(r["context"], "workload: m=" + std::to_string(item["m"].get<int64_t>()));
    EXPECT_EQ(r["energy"]["not_measured"], "host reference runner: no energy counter");
    EXPECT_EQ(r["energy"]["joules"], 0);
  }
  EXPECT_NE(energy.out.find("energy not measured for 6 items: host reference runner"),
            std::string::npos)
      << energy.out;
  EXPECT_NE(energy.out.find("not measured: host reference runner: no energy counter"),
            std::string::npos)
      << energy.out;

  ASSERT_EQ(submit({"--context", "isolated"}).exit_code, 0);
  const nlohmann::json isolated = document(latest());
  ASSERT_EQ(isolated["batches"].size(), 3u) << isolated["batches"].dump();
  for (const auto& b : isolated["batches"]) EXPECT_EQ(b["context"], "isolated");

  const CommandResult bad = submit({"--context", "mixed"});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("--context: unknown value \"mixed\"; valid: workload, isolated"),
            std::string::npos)
      << bad.err;
}

TEST_F(EndToEndTest, BadInputAndUnknownJobsFailWithOneLine) {
  for (const auto& args :
       std::vector<std::vector<std::string>>{{"submit", "--shapes", "0x5x5"},
                                             {"submit", "--shapes", "4096x4096"},
                                             {"submit", "--shapes", "64", "--recipes", "fp16"},
                                             {"submit", "--shapes", "64", "--num-iters", "0"},
                                             {"report", "987654"},
                                             {"cancel", "987654"},
                                             {"watch", "987654"}}) {
    auto r = Cli(args);
    EXPECT_NE(r.exit_code, 0) << args[0] << " " << args.back();
    EXPECT_FALSE(r.err.empty());
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  }
  grpc::ClientContext ctx;
  v1::ListJobsResponse jobs;
  ASSERT_TRUE(stub_->ListJobs(&ctx, v1::ListJobsRequest(), &jobs).ok());
  EXPECT_EQ(jobs.jobs_size(), 0);
}

TEST_F(EndToEndTest, UnreachableDaemonIsNamed) {
  auto r = RunCommand({GEMMPROF_CLI_PATH, "--server", "127.0.0.1:1", "jobs"});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("127.0.0.1:1"), std::string::npos) << r.err;
  auto env = RunCommand({GEMMPROF_CLI_PATH, "jobs"}, {"GEMMPROF_SERVER=127.0.0.1:2"});
  EXPECT_NE(env.exit_code, 0);
  EXPECT_NE(env.err.find("127.0.0.1:2"), std::string::npos) << env.err;
}

TEST_F(EndToEndTest, SigtermStopsCleanly) {
  const int status = daemon_->StopWith(SIGTERM);
  ASSERT_TRUE(WIFEXITED(status)) << status;
  EXPECT_EQ(WEXITSTATUS(status), 0);
  EXPECT_NE(Slurp(log_path()).find("stopped cleanly"), std::string::npos) << Slurp(log_path());
}

}  // namespace
}  // namespace gemmprof::testing
