// Every device of a node: the real gemmprofd with two emulated host devices (one worker
// process each) and the real CLI. A job spreads over both; `--devices` pins one.
#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <thread>

#include "tests/integration/process.h"
#include "tests/support/temp_dir.h"

namespace gemmprof::testing {
namespace {

class NodeDevicesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string port_file = dir_.File("port");
    daemon_ = std::make_unique<Process>(
        std::vector<std::string>{GEMMPROFD_PATH, "--listen", "127.0.0.1:0", "--db",
                                 dir_.File("results.db"), "--backend", "host", "--host-devices",
                                 "2", "--node", "node-a", "--port-file", port_file},
        dir_.File("gemmprofd.log"));
    for (int i = 0; i < 1500 && Slurp(port_file).empty(); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    const std::string port = Slurp(port_file);
    ASSERT_FALSE(port.empty()) << Slurp(dir_.File("gemmprofd.log"));
    address_ = "127.0.0.1:" + port.substr(0, port.find('\n'));
  }

  CommandResult Cli(std::vector<std::string> args) {
    args.insert(args.begin(), {GEMMPROF_CLI_PATH, "--server", address_});
    return RunCommand(args);
  }

  // Submits and waits; returns the report's JSON.
  nlohmann::json RunJob(std::vector<std::string> extra) {
    std::vector<std::string> args = {
        "submit",
        "--shapes",
        "64x256x256,72x256x256,80x256x256,88x256x256,96x256x256,104x256x256",
        "--recipes",
        "bf16,fp8-current",
        "--num-warmup",
        "0",
        "--num-iters",
        "2",
        "--force"};
    args.insert(args.end(), extra.begin(), extra.end());
    const CommandResult submit = Cli(args);
    EXPECT_EQ(submit.exit_code, 0) << submit.err;
    const std::string id = submit.out.substr(0, submit.out.find('\n'));
    const CommandResult watch = Cli({"watch", id});
    EXPECT_EQ(watch.exit_code, 0) << watch.err;
    const CommandResult report = Cli({"report", id, "--format", "json"});
    EXPECT_EQ(report.exit_code, 0) << report.err;
    return nlohmann::json::parse(report.out, nullptr, false);
  }

  static std::multiset<std::string> Gpus(const nlohmann::json& report) {
    std::multiset<std::string> out;
    for (const auto& item : report["items"]) out.insert(item["device_uuid"].get<std::string>());
    return out;
  }

  TempDir dir_;
  std::unique_ptr<Process> daemon_;
  std::string address_;
};

TEST_F(NodeDevicesTest, AJobSpreadsOverBothDevicesAndDevicesPinsOne) {
  const nlohmann::json spread = RunJob({});
  ASSERT_FALSE(spread.is_discarded());
  EXPECT_EQ(spread["job"]["state"], "succeeded");
  EXPECT_EQ(spread["job"]["node"], "node-a");
  const auto gpus = Gpus(spread);
  EXPECT_EQ(gpus.size(), 12u);
  EXPECT_EQ(std::set<std::string>(gpus.begin(), gpus.end()).size(), 2u)
      << "both emulated devices measured groups of the job";
  for (const auto& item : spread["items"]) EXPECT_EQ(item["measured_node"], "node-a");

  const nlohmann::json pinned = RunJob({"--devices", "1"});
  ASSERT_FALSE(pinned.is_discarded());
  EXPECT_EQ(pinned["job"]["devices"], nlohmann::json::array({1}));
  const auto one = Gpus(pinned);
  EXPECT_EQ(std::set<std::string>(one.begin(), one.end()).size(), 1u);
  EXPECT_NE(one.begin()->find("-1"), std::string::npos) << *one.begin();

  const CommandResult bad = Cli({"submit", "--shapes", "64", "--devices", "2"});
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_NE(bad.err.find("devices[0]: 2 is not a device of this node (it has 2 devices: 0..1)"),
            std::string::npos)
      << bad.err;
  const CommandResult jobs = Cli({"jobs", "--node", "node-b"});
  EXPECT_EQ(jobs.exit_code, 0) << jobs.err;
  EXPECT_EQ(jobs.out, "no jobs\n");
}

TEST(NodeFlagsTest, BadNodeAndHostDevicesAreOneLineAtStart) {
  for (const auto& [flag, value, expected] : std::vector<std::array<std::string, 3>>{
           {"--node", "bad name", "--node: 'bad name' may hold only letters"},
           {"--node", std::string(65, 'n'), "is longer than 64 characters"},
           {"--host-devices", "0", "--host-devices"},
           {"--host-devices", "17", "--host-devices"},
           {"--lease-seconds", "0", "--lease-seconds"},
           {"--lease-seconds", "3601", "--lease-seconds"},
           {"--drain-after", "-1", "--drain-after"},
           {"--host-model", std::string(101, 'm'),
            "--host-model: 101 characters, more than the limit of 100"}}) {
    const CommandResult r = RunCommand({GEMMPROFD_PATH, "--backend", "host", flag, value});
    EXPECT_EQ(r.exit_code, 2) << flag << " " << value;
    EXPECT_NE(r.err.find(expected), std::string::npos) << r.err;
  }
}

}  // namespace
}  // namespace gemmprof::testing
