// The "laptop to GPU node, safely" path with the real binaries only: gemmprofd (host
// backend) serving TLS with a throwaway CA and a tokens file made by `gemmprof token new`,
// driven by the real gemmprof CLI. Each check is on exit codes and the one stderr line a
// user sees; no test reaches the daemon other than through the CLI. Every token must stay
// out of the daemon's log and out of every CLI stderr.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <sstream>
#include <thread>

#include "tests/integration/process.h"
#include "tests/support/temp_dir.h"
#include "tests/support/test_pki.h"

namespace gemmprof::testing {
namespace {

// Every worker process aborts on item seq 1 and never answers item seq 3 of any job: the
// first gives a partial job, the second a job that holds the single worker until the
// daemon is killed (its workers die with it), so jobs behind it stay queued.
constexpr char kFault[] = "GEMMPROF_WORKER_FAULT=crash@1,hang@3";

int Lines(const std::string& s) { return static_cast<int>(std::count(s.begin(), s.end(), '\n')); }

bool Has(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

// Waits up to `seconds` for `done`; true when it came.
template <typename Pred>
bool WaitFor(Pred done, double seconds = 10) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (std::chrono::steady_clock::now() < deadline) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return done();
}

class LaptopToNodeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // The CLI must see only what each test gives it: no settings of whoever runs the
    // suite, no config file from their home.
    for (const char* name :
         {"GEMMPROF_SERVER", "GEMMPROF_CONFIG", "GEMMPROF_TOKEN", "GEMMPROF_TOKEN_FILE",
          "GEMMPROF_TLS", "GEMMPROF_TLS_CA", "GEMMPROF_TLS_CERT", "GEMMPROF_TLS_KEY",
          "GEMMPROF_TLS_SERVER_NAME", "GEMMPROF_TIMEOUT", "GEMMPROF_WORKER_FAULT"}) {
      unsetenv(name);
    }
    setenv("HOME", dir_.path().c_str(), 1);
    setenv("XDG_CONFIG_HOME", dir_.File("xdg").c_str(), 1);

    auto pki = MakeTestPki(dir_.path().string(), "node");
    ASSERT_TRUE(pki.ok()) << pki.status();
    pki_ = *pki;
    std::string tokens_file;
    for (const auto& [name, role] : std::vector<std::pair<std::string, std::string>>{
             {"reader", "read"}, {"alice", "submit"}, {"bob", "submit"}}) {
      auto made = RunCommand({GEMMPROF_CLI_PATH, "token", "new", "--name", name, "--role", role});
      ASSERT_EQ(made.exit_code, 0) << made.err;
      ASSERT_EQ(Lines(made.out), 2) << made.out;
      const std::string token = made.out.substr(0, made.out.find('\n'));
      const std::string line = made.out.substr(token.size() + 1);
      ASSERT_EQ(line.rfind(name + " " + role + " ", 0), 0u) << line;
      EXPECT_FALSE(Has(made.err, token)) << "token new's hints do not repeat the token";
      EXPECT_FALSE(Has(line, token)) << "the tokens-file line holds only the hash";
      tokens_[name] = token;
      token_files_[name] = WriteSecret(name + ".token", token + "\n");
      tokens_file += line;
    }
    WriteTextFile(dir_.File("tokens"), tokens_file);

    const std::string port_file = dir_.File("port");
    daemon_ = std::make_unique<Process>(
        std::vector<std::string>{GEMMPROFD_PATH, "--backend", "host", "--listen", "127.0.0.1:0",
                                 "--port-file", port_file, "--db", dir_.File("results.db"),
                                 "--tls-cert", pki_.server_cert, "--tls-key", pki_.server_key,
                                 "--tokens", dir_.File("tokens")},
        log_path(), std::vector<std::string>{kFault});
    ASSERT_TRUE(WaitFor([&] { return !ReadTextFile(port_file).empty(); }))
        << "gemmprofd did not start:\n"
        << ReadTextFile(log_path());
    const std::string port = ReadTextFile(port_file);
    // The server certificate names localhost and 127.0.0.1; a laptop uses a host name.
    server_ = "localhost:" + port.substr(0, port.find('\n'));
  }

  void TearDown() override {
    const std::string log = ReadTextFile(log_path());
    for (const auto& [name, token] : tokens_) {
      EXPECT_FALSE(Has(log, token)) << name << "'s token is in the daemon's log:\n" << log;
    }
  }

  std::string log_path() const { return dir_.File("gemmprofd.log"); }

  // Writes a file only its owner may read (the CLI warns about any other mode).
  std::string WriteSecret(const std::string& name, const std::string& content) {
    const std::string path = dir_.File(name);
    WriteTextFile(path, content);
    chmod(path.c_str(), 0600);
    return path;
  }

  // Runs the CLI with `args` after the program name, and checks that no token leaks into
  // what it printed on stderr.
  CommandResult Run(const std::vector<std::string>& args,
                    const std::vector<std::string>& env = {}) {
    std::vector<std::string> argv = {GEMMPROF_CLI_PATH};
    argv.insert(argv.end(), args.begin(), args.end());
    auto r = RunCommand(argv, env);
    for (const auto& [name, token] : tokens_) {
      EXPECT_FALSE(Has(r.err, token)) << name << "'s token is on stderr: " << r.err;
    }
    return r;
  }

  // The CLI against the daemon over TLS with `user`'s token file ("" for none).
  CommandResult Cli(const std::string& user, const std::vector<std::string>& args) {
    std::vector<std::string> argv = {"--server", server_, "--tls-ca", pki_.ca_cert};
    if (!user.empty()) argv.insert(argv.end(), {"--token-file", token_files_.at(user)});
    argv.insert(argv.end(), args.begin(), args.end());
    return Run(argv);
  }

  // Submits as `user` without waiting; the job id.
  int64_t Submit(const std::string& user, const std::string& shapes) {
    auto r = Cli(user, {"submit", "--shapes", shapes, "--recipes", "bf16", "--num-warmup", "0",
                        "--num-iters", "2"});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.err, "");
    return r.out.empty() ? 0 : std::stoll(r.out);
  }

  // The row of `jobs` for `id` ("" when absent).
  std::string JobRow(int64_t id) {
    auto r = Cli("reader", {"jobs"});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    std::istringstream in(r.out);
    for (std::string line; std::getline(in, line);) {
      std::istringstream fields(line);
      std::string first;
      if (fields >> first && first == std::to_string(id)) return line;
    }
    return "";
  }

  TempDir dir_;
  TestPki pki_;
  std::map<std::string, std::string> tokens_;       // name -> token
  std::map<std::string, std::string> token_files_;  // name -> path
  std::unique_ptr<Process> daemon_;
  std::string server_;
};

TEST_F(LaptopToNodeTest, TlsWithTheCaAndAReadTokenWorks) {
  auto r = Cli("reader", {"jobs"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "no jobs\n");
  EXPECT_EQ(r.err, "") << "a 0600 token file gives no warning";
  auto devices = Cli("reader", {"devices"});
  EXPECT_EQ(devices.exit_code, 0) << devices.err;
  EXPECT_TRUE(Has(devices.out, "host-reference")) << devices.out;
}

TEST_F(LaptopToNodeTest, AClientWithoutTheCaFailsWithOneLineNamingTlsCa) {
  // Plaintext to a TLS daemon: the handshake is refused at once.
  auto plain = Run({"--server", server_, "--token-file", token_files_["reader"], "jobs"});
  EXPECT_EQ(plain.exit_code, 1);
  EXPECT_EQ(Lines(plain.err), 1) << plain.err;
  EXPECT_TRUE(Has(plain.err, "--tls-ca")) << plain.err;
  EXPECT_TRUE(Has(plain.err, server_)) << plain.err;
  // TLS with the system's CAs, which do not hold the throwaway one.
  auto system_cas =
      Run({"--server", server_, "--tls", "--token-file", token_files_["reader"], "jobs"});
  EXPECT_EQ(system_cas.exit_code, 1);
  EXPECT_EQ(Lines(system_cas.err), 1) << system_cas.err;
  EXPECT_TRUE(Has(system_cas.err, "TLS")) << system_cas.err;
  EXPECT_TRUE(Has(system_cas.err, "--tls-ca")) << system_cas.err;
  EXPECT_EQ(system_cas.out, "");
}

TEST_F(LaptopToNodeTest, NoTokenOrAnUnknownTokenIsUnauthenticated) {
  auto none = Cli("", {"jobs"});
  EXPECT_EQ(none.exit_code, 1);
  EXPECT_EQ(Lines(none.err), 1) << none.err;
  EXPECT_TRUE(Has(none.err, "unauthenticated")) << none.err;
  EXPECT_TRUE(Has(none.err, "--token-file")) << none.err;

  // A well-formed token the daemon does not know; it must not be echoed either.
  auto stranger =
      RunCommand({GEMMPROF_CLI_PATH, "token", "new", "--name", "eve", "--role", "admin"});
  ASSERT_EQ(stranger.exit_code, 0) << stranger.err;
  tokens_["eve"] = stranger.out.substr(0, stranger.out.find('\n'));
  auto unknown = Run({"--server", server_, "--tls-ca", pki_.ca_cert, "jobs"},
                     {"GEMMPROF_TOKEN=" + tokens_["eve"]});
  EXPECT_EQ(unknown.exit_code, 1);
  EXPECT_EQ(Lines(unknown.err), 1) << unknown.err;
  EXPECT_TRUE(Has(unknown.err, "unauthenticated")) << unknown.err;
}

TEST_F(LaptopToNodeTest, AReadTokenListsJobsButCannotSubmit) {
  auto jobs = Cli("reader", {"jobs"});
  EXPECT_EQ(jobs.exit_code, 0) << jobs.err;
  auto submit = Cli("reader", {"submit", "--shapes", "64x64x64", "--recipes", "bf16"});
  EXPECT_EQ(submit.exit_code, 1);
  EXPECT_EQ(Lines(submit.err), 1) << submit.err;
  EXPECT_TRUE(Has(submit.err, "permission denied")) << submit.err;
  EXPECT_TRUE(Has(submit.err, "read")) << submit.err;
  EXPECT_EQ(submit.out, "");
  EXPECT_EQ(Cli("reader", {"jobs"}).out, "no jobs\n") << "nothing was queued";
}

TEST_F(LaptopToNodeTest, OnlyTheSubmitterCancelsAJobAndJobsNamesThem) {
  // Bob's job holds the single worker on its item seq 3 (hang@3), so alice's job stays
  // queued for as long as the test needs.
  const int64_t blocker = Submit("bob", "64x64x64,72x72x72,80x80x80,88x88x88");
  ASSERT_TRUE(WaitFor([&] { return Has(JobRow(blocker), "running"); })) << JobRow(blocker);
  const int64_t id = Submit("alice", "64x64x64");
  ASSERT_GT(id, blocker);
  const std::string row = JobRow(id);
  EXPECT_TRUE(Has(row, "queued")) << row;
  EXPECT_TRUE(Has(row, " alice ")) << "jobs names the submitter in its by column: " << row;
  EXPECT_TRUE(Has(JobRow(blocker), " bob ")) << JobRow(blocker);

  auto by_bob = Cli("bob", {"cancel", std::to_string(id)});
  EXPECT_EQ(by_bob.exit_code, 1);
  EXPECT_EQ(Lines(by_bob.err), 1) << by_bob.err;
  EXPECT_TRUE(Has(by_bob.err, "permission denied")) << by_bob.err;
  EXPECT_TRUE(Has(by_bob.err, "'alice'")) << "names the owner: " << by_bob.err;
  auto by_reader = Cli("reader", {"cancel", std::to_string(id)});
  EXPECT_EQ(by_reader.exit_code, 1);
  EXPECT_TRUE(Has(by_reader.err, "permission denied")) << by_reader.err;
  EXPECT_TRUE(Has(JobRow(id), "queued")) << JobRow(id);

  auto by_alice = Cli("alice", {"cancel", std::to_string(id)});
  EXPECT_EQ(by_alice.exit_code, 0) << by_alice.err;
  EXPECT_EQ(by_alice.err, "");
  EXPECT_TRUE(Has(JobRow(id), "cancelled")) << JobRow(id);
  auto watch = Cli("reader", {"watch", std::to_string(id)});
  EXPECT_EQ(watch.exit_code, 4) << "a cancelled job: " << watch.err;

  // The ownership check comes before the job's state: an ended job is still refused to
  // another user, and its owner hears that it has ended.
  auto again_bob = Cli("bob", {"cancel", std::to_string(id)});
  EXPECT_EQ(again_bob.exit_code, 1);
  EXPECT_TRUE(Has(again_bob.err, "permission denied")) << again_bob.err;
  auto again_alice = Cli("alice", {"cancel", std::to_string(id)});
  EXPECT_EQ(again_alice.exit_code, 1);
  EXPECT_EQ(Lines(again_alice.err), 1) << again_alice.err;
  EXPECT_FALSE(Has(again_alice.err, "permission denied")) << again_alice.err;
  EXPECT_TRUE(Has(again_alice.err, "cancelled")) << again_alice.err;
}

TEST_F(LaptopToNodeTest, TokenFromTheEnvironmentAndFromAConfigFile) {
  auto env = Run({"--server", server_, "jobs"},
                 {"GEMMPROF_TOKEN=" + tokens_["reader"], "GEMMPROF_TLS_CA=" + pki_.ca_cert});
  EXPECT_EQ(env.exit_code, 0) << env.err;
  EXPECT_EQ(env.out, "no jobs\n");
  EXPECT_EQ(env.err, "");

  // The config file's relative paths are read against its own folder, not the cwd.
  std::filesystem::create_directory(dir_.File("laptop"));
  std::filesystem::copy_file(pki_.ca_cert, dir_.File("laptop/ca.pem"));
  WriteSecret("laptop/token", tokens_["alice"] + "\n");
  WriteTextFile(dir_.File("laptop/config.toml"), "server = \"" + server_ +
                                                     "\"\ntls_ca = \"ca.pem\"\n"
                                                     "token_file = \"token\"\n");
  auto flag = Run({"--config", dir_.File("laptop/config.toml"), "jobs"});
  EXPECT_EQ(flag.exit_code, 0) << flag.err;
  EXPECT_EQ(flag.out, "no jobs\n");
  EXPECT_EQ(flag.err, "");
  // The token is alice's (a submit token), not just any that lists jobs.
  auto submit = Run({"submit", "--shapes", "64x64x64", "--recipes", "bf16", "--num-warmup", "0",
                     "--num-iters", "2", "--wait"},
                    {"GEMMPROF_CONFIG=" + dir_.File("laptop/config.toml")});
  EXPECT_EQ(submit.exit_code, 0) << submit.err;
  EXPECT_EQ(submit.err, "");
  EXPECT_TRUE(Has(JobRow(1), " alice ")) << JobRow(1);
}

TEST_F(LaptopToNodeTest, APartialJobExitsThree) {
  // Item seq 1 crashes its worker (crash@1); seq 0 runs.
  auto r = Cli("alice", {"submit", "--shapes", "64x64x64,72x72x72", "--recipes", "bf16",
                         "--num-warmup", "0", "--num-iters", "2", "--wait"});
  EXPECT_EQ(r.exit_code, 3) << r.out << r.err;
  EXPECT_TRUE(Has(r.out, "partial")) << r.out;
  auto row = JobRow(1);
  EXPECT_TRUE(Has(row, "partial")) << row;
  // The daemon lives on, and the restarted worker serves the next job.
  auto next = Cli("alice", {"submit", "--shapes", "48x48x48", "--recipes", "bf16", "--num-warmup",
                            "0", "--num-iters", "2", "--wait"});
  EXPECT_EQ(next.exit_code, 0) << next.err;
}

TEST_F(LaptopToNodeTest, PlaintextOnANetworkAddressIsRefusedAtOnce) {
  auto r = RunCommand({GEMMPROFD_PATH, "--backend", "host", "--listen", "0.0.0.0:0", "--db",
                       ":memory:", "--tokens", dir_.File("tokens")});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(Lines(r.err), 1) << r.err;
  EXPECT_TRUE(Has(r.err, "--insecure")) << r.err;
  EXPECT_TRUE(Has(r.err, "--tls-cert")) << r.err;
}

}  // namespace
}  // namespace gemmprof::testing
