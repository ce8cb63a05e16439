// One store for a cluster: a real PostgreSQL 15 on loopback (tests/support/pg_server.h)
// shared by two real gemmprofd daemons (host backend, different --node), driven by the
// real CLI. A job on node A answers the same job on node B from the cache; PostgreSQL
// stopping and coming back costs calls, never the daemon.
#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <thread>

#include "tests/integration/process.h"
#include "tests/support/pg_server.h"
#include "tests/support/temp_dir.h"

namespace gemmprof::testing {
namespace {

// Each job on the daemon that accepted it (these tests are about the shared store; the
// cluster queue has fleet_test.cc).
const std::vector<std::string> kJob = {
    "submit",    "--where",          "this-node", "--shapes", "64x256x256,96x256x256,128x256x256",
    "--recipes", "bf16,fp8-current", "--mode",    "both",     "--num-warmup",
    "0",         "--num-iters",      "2"};

class Daemon {
 public:
  Daemon(TempDir& dir, const std::string& node, const std::string& uri) {
    const std::string port_file = dir.File(node + ".port");
    log_ = dir.File(node + ".log");
    process_ = std::make_unique<Process>(
        std::vector<std::string>{GEMMPROFD_PATH, "--listen", "127.0.0.1:0", "--db", uri,
                                 "--backend", "host", "--node", node, "--port-file", port_file},
        log_);
    for (int i = 0; i < 1500 && Slurp(port_file).empty(); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    const std::string port = Slurp(port_file);
    if (!port.empty()) address_ = "127.0.0.1:" + port.substr(0, port.find('\n'));
  }
  bool up() const { return !address_.empty(); }
  // SIGTERM: the daemon stops cleanly (its record then says stopped).
  int Stop() { return process_->StopWith(SIGTERM); }
  std::string log() const { return Slurp(log_); }

  CommandResult Cli(std::vector<std::string> args) const {
    args.insert(args.begin(), {GEMMPROF_CLI_PATH, "--server", address_});
    return RunCommand(args);
  }
  // Submits `args` with --wait; returns the job id (0 on failure).
  std::string RunJob(const std::vector<std::string>& args) const {
    const CommandResult submit = Cli(args);
    EXPECT_EQ(submit.exit_code, 0) << submit.err;
    const std::string id = submit.out.substr(0, submit.out.find('\n'));
    const CommandResult watch = Cli({"watch", id});
    EXPECT_EQ(watch.exit_code, 0) << watch.err;
    return id;
  }
  nlohmann::json Report(const std::string& id) const {
    const CommandResult r = Cli({"report", id, "--format", "json"});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return nlohmann::json::parse(r.out, nullptr, false);
  }

 private:
  std::unique_ptr<Process> process_;
  std::string log_;
  std::string address_;
};

TEST(ClusterStoreTest, TwoDaemonsShareOneCacheAndSurviveAPostgresRestart) {
  TempDir dir;
  auto server = PgServer::Start();
  ASSERT_TRUE(server.ok()) << server.status();
  auto uri = (*server)->NewDatabase();
  ASSERT_TRUE(uri.ok()) << uri.status();
  Daemon a(dir, "node-a", *uri);
  ASSERT_TRUE(a.up()) << a.log();
  Daemon b(dir, "node-b", *uri);
  ASSERT_TRUE(b.up()) << b.log();

  // A job on A, the same job on B: every item of B's is A's measurement.
  const std::string job_a = a.RunJob(kJob);
  const nlohmann::json first = a.Report(job_a);
  ASSERT_FALSE(first.is_discarded());
  EXPECT_EQ(first["job"]["node"], "node-a");
  const std::string job_b = b.RunJob(kJob);
  const nlohmann::json second = b.Report(job_b);
  ASSERT_FALSE(second.is_discarded());
  EXPECT_EQ(second["job"]["node"], "node-b");
  ASSERT_EQ(second["items"].size(), 12u);
  for (const auto& item : second["items"]) {
    EXPECT_TRUE(item["cached"].get<bool>()) << item.dump();
    EXPECT_EQ(item["measured_node"], "node-a");
  }
  const CommandResult text = b.Cli({"report", job_b});
  EXPECT_NE(text.out.find("cached: 12 of 12 results come from the result cache, measured on "
                          "node-a (12)"),
            std::string::npos)
      << text.out;
  // Either daemon sees the whole cluster's jobs; --node filters.
  const CommandResult all = a.Cli({"jobs"});
  EXPECT_NE(all.out.find("node-b"), std::string::npos) << all.out;
  const CommandResult only_a = a.Cli({"jobs", "--node", "node-a"});
  EXPECT_EQ(only_a.out.find("node-b"), std::string::npos) << only_a.out;
  // A job is its own daemon's to cancel.
  const CommandResult foreign = b.Cli({"cancel", job_a});
  EXPECT_NE(foreign.exit_code, 0);
  EXPECT_NE(foreign.err.find("job " + job_a +
                             " runs on node node-a, not on this one (node-b); "
                             "cancel it through the gemmprofd of node node-a"),
            std::string::npos)
      << foreign.err;

  // PostgreSQL goes away: calls fail with one clear UNAVAILABLE line; nothing is stored.
  ASSERT_TRUE((*server)->Stop().ok());
  const CommandResult down = a.Cli({"jobs"});
  EXPECT_NE(down.exit_code, 0);
  EXPECT_NE(down.err.find("PostgreSQL"), std::string::npos) << down.err;
  EXPECT_EQ(down.err.find('\n'), down.err.size() - 1) << "one line: " << down.err;
  const CommandResult refused = a.Cli({"submit", "--shapes", "64", "--recipes", "bf16"});
  EXPECT_NE(refused.exit_code, 0);
  // Back: the same daemons carry on, without a restart of their own.
  ASSERT_TRUE((*server)->Restart().ok());
  const std::string again = a.RunJob({"submit", "--shapes", "160x256x256", "--recipes", "bf16",
                                      "--num-warmup", "0", "--num-iters", "2"});
  EXPECT_EQ(a.Report(again)["job"]["state"], "succeeded");
  const CommandResult jobs = b.Cli({"jobs"});
  EXPECT_EQ(jobs.exit_code, 0) << jobs.err;
  EXPECT_EQ(jobs.out.find("64x"), std::string::npos);
  // 3 jobs: the refused submission left nothing behind.
  int rows = 0;
  for (size_t p = jobs.out.find('\n'); p != std::string::npos; p = jobs.out.find('\n', p + 1)) {
    ++rows;
  }
  EXPECT_EQ(rows, 2 + 3) << jobs.out;  // header, rule, 3 jobs
}

// `gemmprof cluster` on either daemon lists both from the store, with their devices;
// a daemon that stops cleanly stays listed as stopped.
TEST(ClusterStoreTest, ClusterListsEveryDaemonOfTheStore) {
  TempDir dir;
  auto server = PgServer::Start();
  ASSERT_TRUE(server.ok()) << server.status();
  auto uri = (*server)->NewDatabase();
  ASSERT_TRUE(uri.ok()) << uri.status();
  Daemon a(dir, "node-a", *uri);
  ASSERT_TRUE(a.up()) << a.log();
  Daemon b(dir, "node-b", *uri);
  ASSERT_TRUE(b.up()) << b.log();
  for (const Daemon* d : {&a, &b}) {
    const CommandResult r = d->Cli({"cluster", "--format", "json"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const nlohmann::json doc = nlohmann::json::parse(r.out, nullptr, false);
    ASSERT_FALSE(doc.is_discarded()) << r.out;
    ASSERT_EQ(doc["daemons"].size(), 2u) << r.out;
    EXPECT_EQ(doc["daemons"][0]["node"], "node-a");
    EXPECT_EQ(doc["daemons"][1]["node"], "node-b");
    for (const auto& row : doc["daemons"]) {
      EXPECT_EQ(row["state"], "serving") << row.dump();
      EXPECT_EQ(row["backend"], "host-reference") << row.dump();
      EXPECT_GE(row["devices"].get<int>(), 1) << row.dump();
      EXPECT_EQ(row["busy"], 0) << row.dump();
    }
  }
  const CommandResult table = a.Cli({"cluster"});
  ASSERT_EQ(table.exit_code, 0) << table.err;
  EXPECT_NE(table.out.find("node-b"), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("host-reference"), std::string::npos) << table.out;

  EXPECT_EQ(b.Stop(), 0) << b.log();
  const CommandResult after = a.Cli({"cluster", "--format", "csv"});
  ASSERT_EQ(after.exit_code, 0) << after.err;
  EXPECT_NE(after.out.find("\nnode-b,stopped,"), std::string::npos) << after.out;
  EXPECT_NE(after.out.find("\nnode-a,serving,"), std::string::npos) << after.out;
}

TEST(ClusterStoreTest, PostgresStoppedMidJobCostsWaitingNotResults) {
  TempDir dir;
  auto server = PgServer::Start();
  ASSERT_TRUE(server.ok()) << server.status();
  auto uri = (*server)->NewDatabase();
  ASSERT_TRUE(uri.ok()) << uri.status();
  Daemon a(dir, "node-a", *uri);
  ASSERT_TRUE(a.up()) << a.log();
  // 16 items in batches of one GEMM, a few seconds on the host reference.
  const CommandResult submit =
      a.Cli({"submit", "--where", "this-node", "--shapes",
             "128x64x128,128x72x128,128x80x128,128x88x128,128x96x128,128x104x128,128x112x128,"
             "128x120x128",
             "--recipes", "bf16,fp8-current", "--num-warmup", "0", "--num-iters", "200"});
  ASSERT_EQ(submit.exit_code, 0) << submit.err;
  const std::string id = submit.out.substr(0, submit.out.find('\n'));
  // Stop the store once the job has recorded something, and bring it back 2 s later.
  for (int i = 0; i < 500; ++i) {
    const nlohmann::json r = a.Report(id);
    if (!r.is_discarded() && r["job"]["finished_items"].get<int>() >= 2) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ASSERT_TRUE((*server)->Stop().ok());
  std::this_thread::sleep_for(std::chrono::seconds(2));
  ASSERT_TRUE((*server)->Restart().ok());
  const CommandResult watch = a.Cli({"watch", id});
  EXPECT_EQ(watch.exit_code, 0) << watch.err << a.log();
  const nlohmann::json report = a.Report(id);
  ASSERT_FALSE(report.is_discarded());
  EXPECT_EQ(report["job"]["state"], "succeeded") << report["job"].dump();
  ASSERT_EQ(report["items"].size(), 16u);
  std::set<int64_t> ids;
  for (const auto& item : report["items"]) {
    EXPECT_EQ(item["status"], "done") << item.dump();
    ids.insert(item["id"].get<int64_t>());
  }
  EXPECT_EQ(ids.size(), 16u) << "every item once";
  // The same results, once each, in the history of the cluster's results.
  const CommandResult history = a.Cli({"history", "--shape", "128x80x128", "--format", "csv"});
  EXPECT_EQ(history.exit_code, 0) << history.err;
  EXPECT_EQ(std::count(history.out.begin(), history.out.end(), '\n'), 1 + 2) << history.out;
  // The job was running when the store went away, and waited for it.
  EXPECT_NE(a.log().find("job " + id + ": the result store is unavailable"), std::string::npos)
      << a.log();
  EXPECT_NE(a.log().find("job " + id + ": the result store is back"), std::string::npos);
}

}  // namespace
}  // namespace gemmprof::testing
