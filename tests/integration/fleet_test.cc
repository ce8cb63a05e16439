// A fleet on one machine: a real PostgreSQL 15 on loopback and four real gemmprofd
// daemons on the host backend presenting themselves as three device models
// (--host-model): two as model-x, one as model-y, one as model-z. Jobs go through the
// cluster queue (submit --where): the daemon that accepts a job is only its front door.
#include <gtest/gtest.h>
#include <httplib.h>
#include <signal.h>
#include <sys/wait.h>

#include <algorithm>
#include <chrono>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "tests/integration/process.h"
#include "tests/support/pg_server.h"
#include "tests/support/temp_dir.h"
#include "wire/token.h"

namespace gemmprof::testing {
namespace {

constexpr char kAlice[] = "gpt_fleet-alice";
constexpr char kBob[] = "gpt_fleet-bob";
constexpr char kRoot[] = "gpt_fleet-root";
// Seconds a claimed batch stays leased without a renewal: short, so a killed daemon's
// batches come back soon.
constexpr int kLeaseSeconds = 3;

// "64x256x256,72x256x256,...": `count` shapes of distinct M.
std::string Shapes(int count, int first_m, int k = 256, int step = 8) {
  std::string out;
  for (int i = 0; i < count; ++i) {
    if (!out.empty()) out += ",";
    out += std::to_string(first_m + step * i) + "x" + std::to_string(k) + "x256";
  }
  return out;
}

class Daemon {
 public:
  Daemon(TempDir& dir, const std::string& node, const std::string& model, const std::string& uri,
         const std::string& tokens)
      : node_(node) {
    const std::string port_file = dir.File(node + ".port");
    const std::string http_port_file = dir.File(node + ".http-port");
    log_ = dir.File(node + ".log");
    // One measurement group per batch: a job's batches spread over the fleet.
    process_ = std::make_unique<Process>(std::vector<std::string>{GEMMPROFD_PATH,
                                                                  "--listen",
                                                                  "127.0.0.1:0",
                                                                  "--db",
                                                                  uri,
                                                                  "--backend",
                                                                  "host",
                                                                  "--host-model",
                                                                  model,
                                                                  "--node",
                                                                  node,
                                                                  "--port-file",
                                                                  port_file,
                                                                  "--lease-seconds",
                                                                  std::to_string(kLeaseSeconds),
                                                                  "--batch-groups",
                                                                  "1",
                                                                  "--tokens",
                                                                  tokens,
                                                                  "--http",
                                                                  "127.0.0.1:0",
                                                                  "--http-port-file",
                                                                  http_port_file},
                                         log_);
    for (int i = 0; i < 1500 && (Slurp(port_file).empty() || Slurp(http_port_file).empty()); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    const std::string port = Slurp(port_file);
    const std::string http_port = Slurp(http_port_file);
    if (!port.empty() && !http_port.empty()) {
      address_ = "127.0.0.1:" + port.substr(0, port.find('\n'));
      http_port_ = std::stoi(http_port);
    }
  }
  bool up() const { return !address_.empty(); }
  int http_port() const { return http_port_; }
  const std::string& node() const { return node_; }
  std::string log() const { return Slurp(log_); }
  // SIGUSR1: the daemon drains; returns its exit status (waitpid's).
  int Drain() { return process_->StopWith(SIGUSR1); }
  // Waits for the daemon to exit on its own; returns its exit status (waitpid's).
  int Wait() { return process_->StopWith(0); }
  // kill -9: the daemon dies holding whatever it claimed; its workers follow.
  void Kill() {
    for (pid_t child : process_->Children()) ::kill(child, SIGKILL);
    process_->StopWith(SIGKILL);
  }

  CommandResult Cli(std::vector<std::string> args, const char* token = kRoot) const {
    args.insert(args.begin(), {GEMMPROF_CLI_PATH, "--server", address_});
    return RunCommand(args, {std::string("GEMMPROF_TOKEN=") + token});
  }
  // Submits; returns the job id ("" on failure, with the error in the test's output).
  std::string Submit(const std::vector<std::string>& args, const char* token = kRoot) const {
    std::vector<std::string> submit = {"submit"};
    submit.insert(submit.end(), args.begin(), args.end());
    const CommandResult r = Cli(submit, token);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    if (r.exit_code != 0) return "";
    return r.out.substr(0, r.out.find('\n'));
  }
  nlohmann::json Report(const std::string& id) const {
    const CommandResult r = Cli({"report", id, "--format", "json"});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return nlohmann::json::parse(r.out, nullptr, false);
  }

 private:
  std::string node_;
  std::unique_ptr<Process> process_;
  std::string log_;
  std::string address_;
  int http_port_ = 0;
};

class FleetTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto server = PgServer::Start();
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = *std::move(server);
    auto uri = server_->NewDatabase();
    ASSERT_TRUE(uri.ok()) << uri.status();
    uri_ = *uri;
    const std::string tokens = dir_.File("tokens");
    WriteFile(tokens, std::string("alice submit ") + wire::TokenSha256Hex(kAlice) +
                          "\nbob submit " + wire::TokenSha256Hex(kBob) + "\nroot admin " +
                          wire::TokenSha256Hex(kRoot) + "\n");
    for (const auto& [node, model] : std::vector<std::pair<std::string, std::string>>{
             {"x1", "model-x"}, {"x2", "model-x"}, {"y1", "model-y"}, {"z1", "model-z"}}) {
      daemons_.push_back(std::make_unique<Daemon>(dir_, node, model, *uri, tokens));
      ASSERT_TRUE(daemons_.back()->up()) << daemons_.back()->log();
    }
  }
  Daemon& x1() { return *daemons_[0]; }
  Daemon& x2() { return *daemons_[1]; }
  Daemon& y1() { return *daemons_[2]; }
  Daemon& z1() { return *daemons_[3]; }

  static void WriteFile(const std::string& path, const std::string& text) {
    FILE* f = fopen(path.c_str(), "w");
    ASSERT_NE(f, nullptr);
    fputs(text.c_str(), f);
    fclose(f);
  }
  // Polls the job through `d` until it ends or `seconds` pass; returns its report.
  static nlohmann::json AwaitEnd(const Daemon& d, const std::string& id, int seconds) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
    nlohmann::json report;
    while (std::chrono::steady_clock::now() < deadline) {
      report = d.Report(id);
      if (!report.is_discarded()) {
        const std::string state = report["job"]["state"];
        if (state != "queued" && state != "running") return report;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
    return report;
  }
  // Item count per measuring node.
  static std::map<std::string, int> MeasuredBy(const nlohmann::json& report) {
    std::map<std::string, int> nodes;
    for (const auto& item : report["items"]) {
      if (item.contains("measured_node")) ++nodes[item["measured_node"].get<std::string>()];
    }
    return nodes;
  }

  TempDir dir_;
  std::unique_ptr<PgServer> server_;
  std::string uri_;
  std::vector<std::unique_ptr<Daemon>> daemons_;
};

TEST_F(FleetTest, AJobForModelXSubmittedToZIsMeasuredByTheXDaemonsOnly) {
  // `gemmprof cluster` on any daemon lists all four.
  const CommandResult cluster = z1().Cli({"cluster", "--format", "json"});
  ASSERT_EQ(cluster.exit_code, 0) << cluster.err;
  const nlohmann::json listing = nlohmann::json::parse(cluster.out, nullptr, false);
  ASSERT_EQ(listing["daemons"].size(), 4u) << cluster.out;
  for (const auto& d : listing["daemons"]) EXPECT_EQ(d["state"], "serving") << d.dump();

  // 24 items in 12 batches of one measurement group each.
  const std::string id =
      z1().Submit({"--where", "model:model-x", "--shapes", Shapes(12, 64), "--recipes",
                   "bf16,fp8-current", "--num-warmup", "0", "--num-iters", "100", "--force"});
  ASSERT_FALSE(id.empty());
  // Followed through the front door: the watch reads the job's progress from the store.
  const CommandResult watch = z1().Cli({"watch", id});
  EXPECT_EQ(watch.exit_code, 0) << watch.err << watch.out;
  const nlohmann::json report = z1().Report(id);
  ASSERT_FALSE(report.is_discarded());
  EXPECT_EQ(report["job"]["state"], "succeeded") << report["job"].dump();
  EXPECT_EQ(report["job"]["node"], "z1");
  ASSERT_EQ(report["items"].size(), 24u);
  const std::map<std::string, int> nodes = MeasuredBy(report);
  EXPECT_EQ(nodes.size(), 2u) << "split between x1 and x2: " << report["items"].dump();
  for (const auto& [node, count] : nodes) {
    EXPECT_TRUE(node == "x1" || node == "x2") << node;
    EXPECT_GT(count, 0);
  }
  int total = 0;
  for (const auto& [node, count] : nodes) {
    total += count;
    std::cout << "job " << id << " (model-x, submitted to z1): " << count << " items measured on "
              << node << "\n";
  }
  EXPECT_EQ(total, 24);

  // A model nobody has: refused at submit, naming the models the cluster has; nothing
  // is stored.
  const CommandResult refused =
      y1().Cli({"submit", "--where", "model:model-w", "--shapes", "64", "--recipes", "bf16"});
  EXPECT_NE(refused.exit_code, 0);
  for (const char* model : {"model-x (2 daemons, 2 devices)", "model-y (1 daemon, 1 device)",
                            "model-z (1 daemon, 1 device)"}) {
    EXPECT_NE(refused.err.find(model), std::string::npos) << refused.err;
  }
  EXPECT_NE(refused.err.find("model:model-w"), std::string::npos) << refused.err;
  const CommandResult jobs = y1().Cli({"jobs", "--format", "json"});
  EXPECT_EQ(nlohmann::json::parse(jobs.out, nullptr, false)["jobs"].size(), 1u) << jobs.out;

  // Bad placements are exit 2 naming the flag, the value and the forms.
  const CommandResult bad = z1().Cli({"submit", "--where", "gpu:h200", "--shapes", "64"});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("--where: 'gpu:h200' is not a placement; give this-node, any, "
                         "model:NAME or node:NAME"),
            std::string::npos)
      << bad.err;
  // A priority needs an admin token.
  const CommandResult priority =
      z1().Cli({"submit", "--where", "model:model-x", "--shapes", "64", "--priority", "5"}, kAlice);
  EXPECT_NE(priority.exit_code, 0);
  EXPECT_NE(priority.err.find("priority: 5 needs an admin token"), std::string::npos)
      << priority.err;
}

TEST_F(FleetTest, AKilledDaemonsBatchesAreMeasuredByTheOtherWithinTheLease) {
  // 40 items in 20 batches, several seconds on two daemons.
  const std::string id =
      z1().Submit({"--where", "model:model-x", "--shapes", Shapes(20, 64), "--recipes",
                   "bf16,fp8-current", "--num-warmup", "0", "--num-iters", "100", "--force"});
  ASSERT_FALSE(id.empty());
  // Once x1 has measured something, it dies holding a batch.
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < 600; ++i) {
    const nlohmann::json r = z1().Report(id);
    if (!r.is_discarded() && MeasuredBy(r)["x1"] >= 2) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ASSERT_GE(MeasuredBy(z1().Report(id))["x1"], 2) << x1().log();
  x1().Kill();
  const auto killed = std::chrono::steady_clock::now();
  const nlohmann::json report = AwaitEnd(z1(), id, kLeaseSeconds + 60);
  const double after_kill_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - killed).count();
  ASSERT_FALSE(report.is_discarded());
  EXPECT_EQ(report["job"]["state"], "succeeded") << report["job"].dump() << x2().log();
  EXPECT_LT(after_kill_s, kLeaseSeconds + 30)
      << "the job ended " << after_kill_s << " s after the kill";
  std::cout << "job " << id << ": x1 killed with -9 after "
            << std::chrono::duration<double>(killed - start).count() << " s; the job ended "
            << report["job"]["state"].get<std::string>() << " " << after_kill_s
            << " s after the kill (lease " << kLeaseSeconds << " s); items by node:";
  for (const auto& [node, count] : MeasuredBy(report)) std::cout << " " << node << " " << count;
  std::cout << "\n";
  ASSERT_EQ(report["items"].size(), 40u);
  std::set<int64_t> items;
  for (const auto& item : report["items"]) {
    EXPECT_EQ(item["status"], "done") << item.dump();
    items.insert(item["id"].get<int64_t>());
  }
  EXPECT_EQ(items.size(), 40u);
  // Exactly one result per item in the store: 40 history rows for these shapes.
  const CommandResult history =
      z1().Cli({"history", "--format", "csv", "--limit", "1000", "--since", "1h"});
  ASSERT_EQ(history.exit_code, 0) << history.err;
  EXPECT_EQ(std::count(history.out.begin(), history.out.end(), '\n'), 1 + 40) << history.out;
  // x2 re-ran what x1 held when it died, and says so.
  EXPECT_NE(x2().log().find("again: the lease of node x1 lapsed"), std::string::npos) << x2().log();
}

TEST_F(FleetTest, ADrainedDaemonFinishesWhatItHoldsAndExitsWhileTheOtherGoesOn) {
  const std::string id =
      z1().Submit({"--where", "model:model-x", "--shapes", Shapes(20, 64), "--recipes",
                   "bf16,fp8-current", "--num-warmup", "0", "--num-iters", "100", "--force"});
  ASSERT_FALSE(id.empty());
  for (int i = 0; i < 600 && MeasuredBy(z1().Report(id))["x1"] < 2; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  // Asked from anywhere through the store; the command returns once x1 has stopped.
  const CommandResult drain = RunCommand({GEMMPROFD_PATH, "--drain", "--node", "x1", "--db", uri_});
  EXPECT_EQ(drain.exit_code, 0) << drain.err;
  EXPECT_NE(drain.out.find("node x1: drain asked; waiting for it to stop"), std::string::npos)
      << drain.out;
  EXPECT_NE(drain.out.find("node x1: drained and stopped"), std::string::npos) << drain.out;
  const int status = x1().Wait();
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status << x1().log();
  EXPECT_NE(x1().log().find("drained: the devices hold nothing; stopping"), std::string::npos)
      << x1().log();
  const nlohmann::json report = AwaitEnd(z1(), id, 120);
  ASSERT_FALSE(report.is_discarded());
  EXPECT_EQ(report["job"]["state"], "succeeded") << report["job"].dump();
  // Nothing x1 held waited for a lease to lapse: x1 finished it before it left.
  EXPECT_EQ(x2().log().find("lease of node x1 lapsed"), std::string::npos) << x2().log();
  const CommandResult cluster = z1().Cli({"cluster", "--format", "csv"});
  EXPECT_NE(cluster.out.find("\nx1,stopped,"), std::string::npos) << cluster.out;
  // SIGUSR1 drains too: y1 holds nothing and exits at once.
  const int y_status = y1().Drain();
  EXPECT_TRUE(WIFEXITED(y_status) && WEXITSTATUS(y_status) == 0) << y_status << y1().log();
  // A node nobody has, and an embedded store, are refused naming why.
  const CommandResult unknown =
      RunCommand({GEMMPROFD_PATH, "--drain", "--node", "nowhere", "--db", uri_});
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_NE(unknown.err.find("--node nowhere: no daemon of this name shares the store"),
            std::string::npos)
      << unknown.err;
  const CommandResult sqlite =
      RunCommand({GEMMPROFD_PATH, "--drain", "--node", "x1", "--db", dir_.File("own.db")});
  EXPECT_EQ(sqlite.exit_code, 2);
  EXPECT_NE(sqlite.err.find("kill -USR1"), std::string::npos) << sqlite.err;
  std::cout << "job " << id << " after x1 drained:";
  for (const auto& [node, count] : MeasuredBy(report)) std::cout << " " << node << " " << count;
  std::cout << "\n";
}

TEST_F(FleetTest, PostgresRestartedUnderARunningCampaignCostsWaitingNotResults) {
  const CommandResult submit =
      z1().Cli({"submit", "--where", "model:model-x,model:model-y", "--campaign", "pg-restart",
                "--shapes", Shapes(16, 64), "--recipes", "bf16,fp8-current", "--num-warmup", "0",
                "--num-iters", "100", "--force"});
  ASSERT_EQ(submit.exit_code, 0) << submit.err;
  std::vector<std::string> ids;
  for (size_t p = 0, q; (q = submit.out.find('\n', p)) != std::string::npos; p = q + 1) {
    ids.push_back(submit.out.substr(p, q - p));
  }
  ASSERT_EQ(ids.size(), 2u) << submit.out;
  for (int i = 0; i < 600; ++i) {
    const nlohmann::json r = z1().Report(ids[0]);
    if (!r.is_discarded() && r["job"]["finished_items"].get<int>() >= 4) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ASSERT_TRUE(server_->Stop().ok());
  const auto stopped = std::chrono::steady_clock::now();
  std::this_thread::sleep_for(std::chrono::seconds(kLeaseSeconds + 2));
  ASSERT_TRUE(server_->Restart().ok());
  std::vector<double> ended_after_s;
  for (const std::string& id : ids) {
    const nlohmann::json report = AwaitEnd(z1(), id, 180);
    ended_after_s.push_back(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - stopped).count());
    ASSERT_FALSE(report.is_discarded());
    EXPECT_EQ(report["job"]["state"], "succeeded") << report["job"].dump();
    ASSERT_EQ(report["items"].size(), 32u);
    for (const auto& item : report["items"]) EXPECT_EQ(item["status"], "done") << item.dump();
  }
  // One result per item across both jobs.
  const CommandResult history =
      z1().Cli({"history", "--format", "csv", "--limit", "1000", "--since", "1h"});
  ASSERT_EQ(history.exit_code, 0) << history.err;
  EXPECT_EQ(std::count(history.out.begin(), history.out.end(), '\n'), 1 + 64) << history.out;
  std::cout << "campaign pg-restart: PostgreSQL stopped for " << kLeaseSeconds + 2
            << " s mid-campaign; jobs " << ids[0] << " and " << ids[1] << " ended succeeded "
            << ended_after_s[0] << " s and " << ended_after_s[1]
            << " s after the stop, 64 results for 64 items\n";
}

TEST_F(FleetTest, ASmallJobOfAnotherSubmitterIsNotStuckBehindALargeOne) {
  // Alice: 400 items (100 batches); then Bob: 8 items (4 batches).
  const std::string large = x1().Submit(
      {"--where", "model:model-x", "--shapes", Shapes(100, 64, 128, 4), "--recipes",
       "bf16,fp8-current", "--mode", "both", "--num-warmup", "0", "--num-iters", "20", "--force"},
      kAlice);
  ASSERT_FALSE(large.empty());
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  const std::string small = y1().Submit(
      {"--where", "model:model-x", "--shapes", Shapes(2, 2000), "--recipes", "bf16,fp8-current",
       "--mode", "both", "--num-warmup", "0", "--num-iters", "20", "--force"},
      kBob);
  ASSERT_FALSE(small.empty());
  const nlohmann::json small_report = AwaitEnd(y1(), small, 300);
  const nlohmann::json large_report = AwaitEnd(x1(), large, 300);
  ASSERT_FALSE(small_report.is_discarded());
  ASSERT_FALSE(large_report.is_discarded());
  EXPECT_EQ(small_report["job"]["state"], "succeeded");
  EXPECT_EQ(large_report["job"]["state"], "succeeded");
  EXPECT_EQ(small_report["job"]["submitted_by"], "bob");
  EXPECT_EQ(large_report["job"]["submitted_by"], "alice");
  EXPECT_LT(small_report["job"]["finished_unix_ms"].get<int64_t>(),
            large_report["job"]["finished_unix_ms"].get<int64_t>())
      << small_report["job"].dump() << "\n"
      << large_report["job"].dump();
  std::cout << "alice's 400-item job " << large << ": started "
            << large_report["job"]["started_unix_ms"].get<int64_t>() << ", ended "
            << large_report["job"]["finished_unix_ms"].get<int64_t>() << "; bob's 8-item job "
            << small << ": started " << small_report["job"]["started_unix_ms"].get<int64_t>()
            << ", ended " << small_report["job"]["finished_unix_ms"].get<int64_t>() << "\n";
  // The large job had started first and was still running when the small one ended.
  EXPECT_LT(large_report["job"]["started_unix_ms"].get<int64_t>(),
            small_report["job"]["started_unix_ms"].get<int64_t>());
}

TEST_F(FleetTest, ACampaignOverTwoModelsIsOneReportWithBothDevices) {
  const CommandResult submit =
      z1().Cli({"submit", "--where", "model:model-x,model:model-y", "--campaign", "fleet-c1",
                "--shapes", Shapes(4, 64), "--recipes", "bf16,fp8-current", "--num-warmup", "0",
                "--num-iters", "20", "--force", "--wait"});
  ASSERT_EQ(submit.exit_code, 0) << submit.err << submit.out;
  EXPECT_NE(submit.err.find("campaign fleet-c1"), std::string::npos) << submit.err;
  const CommandResult json = y1().Cli({"report", "--campaign", "fleet-c1", "--format", "json"});
  ASSERT_EQ(json.exit_code, 0) << json.err;
  const nlohmann::json doc = nlohmann::json::parse(json.out, nullptr, false);
  ASSERT_FALSE(doc.is_discarded()) << json.out;
  ASSERT_EQ(doc["jobs"].size(), 2u) << json.out;
  EXPECT_EQ(doc["jobs"][0]["device"], "model-x");
  EXPECT_EQ(doc["jobs"][1]["device"], "model-y");
  for (const auto& job : doc["jobs"]) EXPECT_EQ(job["state"], "succeeded") << job.dump();
  ASSERT_EQ(doc["comparisons"].size(), 1u);
  EXPECT_EQ(doc["comparisons"][0]["device_b"], "model-y");
  // Each job measured on its own model's daemons only.
  const nlohmann::json x_job = z1().Report(std::to_string(doc["jobs"][0]["id"].get<int64_t>()));
  for (const auto& [node, n] : MeasuredBy(x_job)) EXPECT_TRUE(node == "x1" || node == "x2") << node;
  const nlohmann::json y_job = z1().Report(std::to_string(doc["jobs"][1]["id"].get<int64_t>()));
  for (const auto& [node, n] : MeasuredBy(y_job)) EXPECT_EQ(node, "y1");
  const CommandResult table = x1().Cli({"report", "--campaign", "fleet-c1"});
  ASSERT_EQ(table.exit_code, 0) << table.err;
  EXPECT_NE(table.out.find("Campaign fleet-c1: 2 jobs"), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("model-y (job "), std::string::npos) << table.out;
  const CommandResult listed = z1().Cli({"jobs", "--campaign", "fleet-c1", "--format", "csv"});
  ASSERT_EQ(listed.exit_code, 0) << listed.err;
  EXPECT_EQ(std::count(listed.out.begin(), listed.out.end(), '\n'), 3) << listed.out;

  // Over HTTP: the campaign's jobs, and the page's campaign view in headless Chromium.
  httplib::Client http("127.0.0.1", y1().http_port());
  const httplib::Headers auth = {{"Authorization", std::string("Bearer ") + kRoot}};
  const auto api = http.Get("/api/v1/jobs?campaign=fleet-c1", auth);
  ASSERT_TRUE(api) << httplib::to_string(api.error());
  ASSERT_EQ(api->status, 200) << api->body;
  const nlohmann::json jobs = nlohmann::json::parse(api->body);
  ASSERT_EQ(jobs["jobs"].size(), 2u) << api->body;
  EXPECT_EQ(jobs["jobs"][0]["where"], "model:model-y");
  EXPECT_EQ(jobs["jobs"][1]["campaign"], "fleet-c1");
  const auto too_long = http.Get("/api/v1/jobs?campaign=" + std::string(65, 'c'), auth);
  ASSERT_TRUE(too_long);
  EXPECT_EQ(too_long->status, 400);
  EXPECT_NE(too_long->body.find("expected 1 to 64 characters"), std::string::npos);
  const std::string chromium = FindChromium();
  ASSERT_FALSE(chromium.empty()) << "chromium not found in PATH (nor GEMMPROF_CHROMIUM): "
                                    "deploy/install_deps.sh installs it";
  const std::vector<std::string> browser =
      HeadlessChromium(chromium, dir_.File("chromium-profile"));
  ASSERT_FALSE(browser.empty()) << "coreutils' timeout not found in PATH";
  const std::string url =
      "http://127.0.0.1:" + std::to_string(y1().http_port()) + "/#campaign=fleet-c1&token=" + kRoot;
  std::vector<std::string> shot = browser;
  shot.insert(
      shot.end(),
      {"--screenshot=" + std::string(GEMMPROF_HTTP_ARTIFACT_DIR) + "/fleet_campaign.png", url});
  EXPECT_EQ(RunCommand(shot).exit_code, 0);
  std::vector<std::string> dump = browser;
  dump.insert(dump.end(), {"--dump-dom", url});
  const CommandResult page = RunCommand(dump);
  ASSERT_EQ(page.exit_code, 0) << page.err;
  const auto count = [&](const std::string& needle) {
    size_t n = 0;
    for (size_t at = page.out.find(needle); at != std::string::npos;
         at = page.out.find(needle, at + 1)) {
      ++n;
    }
    return n;
  };
  EXPECT_EQ(count("class=\"campaign-job\""), 2u) << page.out;
  // bf16 and fp8-current, autocast, on two devices; one ratio per recipe.
  EXPECT_EQ(count("class=\"campaign-bar\""), 4u) << page.out;
  EXPECT_EQ(count("class=\"num campaign-ratio\""), 2u) << page.out;
  EXPECT_EQ(count("class=\"campaign-link\""), 2u) << page.out;
  EXPECT_NE(page.out.find("Campaign fleet-c1"), std::string::npos);
  EXPECT_EQ(page.out.find("class=\"error\""), std::string::npos) << "the page reported an error";

  // A campaign naming a model nobody has submits nothing.
  const CommandResult refused = z1().Cli(
      {"submit", "--where", "model:model-x,model:model-w", "--shapes", "64", "--recipes", "bf16"});
  EXPECT_NE(refused.exit_code, 0);
  EXPECT_NE(refused.err.find("model:model-w: no serving daemon"), std::string::npos) << refused.err;
  EXPECT_NE(refused.err.find("no job was submitted"), std::string::npos) << refused.err;
}

}  // namespace
}  // namespace gemmprof::testing
