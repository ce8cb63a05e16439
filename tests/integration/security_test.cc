// The real gemmprofd binary: refusing plaintext on the network, one-line errors for bad
// security and limit flags, and SIGHUP reloading certificates and tokens while it serves.
#include <grpcpp/create_channel.h>
#include <grpcpp/security/credentials.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <thread>

#include "gemmprof/v1/gemmprof.grpc.pb.h"
#include "tests/integration/process.h"
#include "tests/support/temp_dir.h"
#include "tests/support/test_pki.h"
#include "wire/token.h"

namespace gemmprof::testing {
namespace {

constexpr char kAdminToken[] = "gpt_integration-admin";
constexpr char kNewToken[] = "gpt_integration-dave";

int Lines(const std::string& s) { return static_cast<int>(std::count(s.begin(), s.end(), '\n')); }

class SecurityTest : public ::testing::Test {
 protected:
  // Runs gemmprofd to its end (it must end by itself within 30 s).
  CommandResult RunDaemon(std::vector<std::string> args) {
    args.insert(args.begin(), {"/usr/bin/timeout", "30", GEMMPROFD_PATH, "--backend", "host",
                               "--db", dir_.File("results.db")});
    return RunCommand(args);
  }

  // Starts gemmprofd in the background and waits for its port.
  void StartDaemon(std::vector<std::string> args) {
    const std::string port_file = dir_.File("port");
    std::remove(port_file.c_str());
    args.insert(args.begin(), {GEMMPROFD_PATH, "--backend", "host", "--db", dir_.File("results.db"),
                               "--port-file", port_file});
    daemon_ = std::make_unique<Process>(args, log_path());
    for (int i = 0; i < 400 && ReadTextFile(port_file).empty(); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    const std::string port = ReadTextFile(port_file);
    ASSERT_FALSE(port.empty()) << "gemmprofd did not start:\n" << ReadTextFile(log_path());
    port_ = port.substr(0, port.find('\n'));
  }

  // Waits until the daemon's log holds `text` the `count`th time.
  bool WaitForLog(const std::string& text, int count = 1) {
    for (int i = 0; i < 400; ++i) {
      const std::string log = ReadTextFile(log_path());
      int seen = 0;
      for (size_t at = log.find(text); at != std::string::npos; at = log.find(text, at + 1)) {
        ++seen;
      }
      if (seen >= count) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return false;
  }

  std::shared_ptr<grpc::Channel> TlsChannel(const std::string& ca_path) {
    grpc::SslCredentialsOptions o;
    o.pem_root_certs = ReadTextFile(ca_path);
    grpc::ChannelArguments args;
    args.SetInt("gemmprof.test.channel", ++channels_);  // a connection of its own
    return grpc::CreateCustomChannel("127.0.0.1:" + port_, grpc::SslCredentials(o), args);
  }

  static grpc::Status List(const std::shared_ptr<grpc::Channel>& channel,
                           const std::string& token) {
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    if (!token.empty()) ctx.AddMetadata(wire::kAuthorizationHeader, wire::kBearerPrefix + token);
    v1::ListJobsResponse resp;
    return v1::GemmProf::NewStub(channel)->ListJobs(&ctx, v1::ListJobsRequest(), &resp);
  }

  std::string log_path() const { return dir_.File("gemmprofd.log"); }

  TempDir dir_;
  std::unique_ptr<Process> daemon_;
  std::string port_;
  int channels_ = 0;
};

TEST_F(SecurityTest, PlaintextOnTheNetworkIsRefusedWithoutInsecure) {
  for (const char* listen : {"0.0.0.0:0", "[::]:0"}) {
    CommandResult r = RunDaemon({"--listen", listen});
    EXPECT_EQ(r.exit_code, 2) << listen << ": " << r.err;
    EXPECT_EQ(Lines(r.err), 1) << r.err;
    EXPECT_NE(r.err.find("not a loopback address"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("--insecure"), std::string::npos) << r.err;
  }
  EXPECT_FALSE(std::filesystem::exists(dir_.File("results.db"))) << "refused before any work";
}

TEST_F(SecurityTest, PlaintextOnTheNetworkWithInsecureServesAndWarns) {
  StartDaemon({"--listen", "0.0.0.0:0", "--insecure"});
  auto channel = grpc::CreateChannel("127.0.0.1:" + port_, grpc::InsecureChannelCredentials());
  grpc::Status s = List(channel, "");
  EXPECT_TRUE(s.ok()) << s.error_message();
  const std::string log = ReadTextFile(log_path());
  EXPECT_NE(log.find("serving PLAINTEXT on 0.0.0.0:0 (--insecure)"), std::string::npos) << log;
  EXPECT_NE(log.find("no --tokens: anyone who can reach"), std::string::npos) << log;
  channel.reset();  // an idle client connection would hold the shutdown for its grace
  const int status = daemon_->StopWith(SIGTERM);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

TEST_F(SecurityTest, BadSecurityAndLimitFlagsAreOneLineEach) {
  auto a = MakeTestPki(dir_.path().string(), "a");
  auto b = MakeTestPki(dir_.path().string(), "b");
  ASSERT_TRUE(a.ok() && b.ok());
  const std::string bad_tokens = dir_.File("bad-tokens");
  WriteTextFile(bad_tokens, "root admin " + wire::TokenSha256Hex("x") + "\nbob writer " +
                                wire::TokenSha256Hex("y") + "\n");
  const std::string missing = dir_.File("missing.pem");
  const std::string dir = dir_.path().string();
  struct Case {
    std::vector<std::string> args;
    std::string expected;
  };
  const std::vector<Case> cases = {
      {{"--tls-cert", missing, "--tls-key", a->server_key}, "--tls-cert: cannot read '" + missing},
      {{"--tls-cert", a->server_cert, "--tls-key", dir}, "--tls-key: '" + dir + "' is a directory"},
      {{"--tls-cert", a->server_cert, "--tls-key", b->server_key},
       "does not match the certificate"},
      {{"--tls-cert", a->server_cert}, "--tls-cert and --tls-key go together"},
      {{"--tls-client-ca", a->ca_cert}, "--tls-client-ca needs --tls-cert and --tls-key"},
      {{"--tls-cert", a->server_cert, "--tls-key", a->server_key, "--tls-client-ca", a->server_key},
       "--tls-client-ca: '" + a->server_key + "' holds no PEM certificate"},
      {{"--tokens", missing}, "--tokens: cannot read '" + missing},
      {{"--tokens", bad_tokens}, "--tokens " + bad_tokens + ":2: unknown role 'writer' (valid: "},
      {{"--max-queued-jobs", "0"}, "--max-queued-jobs"},
      {{"--max-queued-jobs", "-1"}, "--max-queued-jobs"},
      {{"--max-queued-jobs", "1000001"}, "--max-queued-jobs"},
      {{"--max-queued-jobs", "many"}, "--max-queued-jobs"},
      {{"--max-items-per-job", "0"}, "--max-items-per-job"},
      {{"--max-items-per-job", "100001"}, "--max-items-per-job"},
      {{"--max-watches-per-client", "0"}, "--max-watches-per-client"},
      {{"--max-watches-per-client", "-5"}, "--max-watches-per-client"},
      {{"--max-watches-per-client", "100001"}, "--max-watches-per-client"},
      {{"--batch-groups", "0"}, "--batch-groups: Value 0 not in range 1 to 64"},
      {{"--batch-groups", "65"}, "--batch-groups: Value 65 not in range 1 to 64"},
      {{"--batch-groups", "two"}, "--batch-groups"},
  };
  for (const Case& c : cases) {
    CommandResult r = RunDaemon(c.args);
    EXPECT_NE(r.exit_code, 0) << c.expected;
    EXPECT_NE(r.exit_code, 124) << "still running: " << c.expected;
    EXPECT_EQ(Lines(r.err), 1) << r.err;
    EXPECT_NE(r.err.find(c.expected), std::string::npos)
        << "want: " << c.expected << "\ngot: " << r.err;
    EXPECT_EQ(r.err.find("PRIVATE KEY"), std::string::npos);
  }
}

TEST_F(SecurityTest, SighupReloadsCertificatesAndTokensWhileServing) {
  auto a = MakeTestPki(dir_.path().string(), "a");
  auto b = MakeTestPki(dir_.path().string(), "b");
  ASSERT_TRUE(a.ok() && b.ok());
  const std::string cert = dir_.File("server.pem"), key = dir_.File("server.key");
  const std::string tokens = dir_.File("tokens");
  WriteTextFile(cert, ReadTextFile(a->server_cert));
  WriteTextFile(key, ReadTextFile(a->server_key));
  WriteTextFile(tokens, "root admin " + wire::TokenSha256Hex(kAdminToken) + "\n");
  StartDaemon(
      {"--listen", "127.0.0.1:0", "--tls-cert", cert, "--tls-key", key, "--tokens", tokens});
  auto before = TlsChannel(a->ca_cert);
  ASSERT_TRUE(List(before, kAdminToken).ok());
  EXPECT_EQ(List(before, kNewToken).error_code(), grpc::StatusCode::UNAUTHENTICATED);

  WriteTextFile(cert, ReadTextFile(b->server_cert));
  WriteTextFile(key, ReadTextFile(b->server_key));
  WriteTextFile(tokens, "root admin " + wire::TokenSha256Hex(kAdminToken) + "\ndave read " +
                            wire::TokenSha256Hex(kNewToken) + "\n");
  ASSERT_EQ(kill(daemon_->pid(), SIGHUP), 0);
  ASSERT_TRUE(WaitForLog("SIGHUP: tokens reloaded")) << ReadTextFile(log_path());
  EXPECT_TRUE(WaitForLog("SIGHUP: TLS reloaded: certificate CN=localhost"));

  grpc::Status with_b = List(TlsChannel(b->ca_cert), kNewToken);
  EXPECT_TRUE(with_b.ok()) << with_b.error_message();
  EXPECT_EQ(List(TlsChannel(a->ca_cert), kAdminToken).error_code(), grpc::StatusCode::UNAVAILABLE);
  EXPECT_TRUE(List(before, kAdminToken).ok()) << "the old connection survives the reload";

  // A broken tokens file on reload: logged with its line, the previous tokens stay.
  WriteTextFile(tokens, "dave read " + wire::TokenSha256Hex(kNewToken) + "\neve admin nothex\n");
  ASSERT_EQ(kill(daemon_->pid(), SIGHUP), 0);
  ASSERT_TRUE(WaitForLog("SIGHUP: tokens not reloaded")) << ReadTextFile(log_path());
  EXPECT_TRUE(WaitForLog(tokens + ":2: the digest must be 64 hex digits"));
  EXPECT_TRUE(List(TlsChannel(b->ca_cert), kAdminToken).ok());

  before.reset();
  const int status = daemon_->StopWith(SIGTERM);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  const std::string log = ReadTextFile(log_path());
  EXPECT_EQ(log.find(kAdminToken), std::string::npos) << "a token reached the log";
  EXPECT_EQ(log.find(kNewToken), std::string::npos);
  EXPECT_EQ(log.find("PRIVATE KEY"), std::string::npos);
}

}  // namespace
}  // namespace gemmprof::testing
