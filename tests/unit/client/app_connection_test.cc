// The connection options through the CLI: flags, environment and config file reach the
// client factory in order of precedence; every bad value is exit code 2 with one line
// and no connection; the token never shows; `token new` needs no server.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "app_harness.h"
#include "test_certs.h"
#include "wire/token.h"

namespace gemmprof::client {
namespace {

using testing::BadCase;
using testing::ExpectUsageError;
using ::testing::HasSubstr;
using ::testing::Not;
using testing::Result;

constexpr char kToken[] = "gpt_DoNotPrint-me_0123456789";

class AppConnectionTest : public testing::AppTest {
 protected:
  AppConnectionTest()
      : dir_(::testing::TempDir() + "gemmprof_app_connection_test_" + std::to_string(::getpid())) {
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    token_file_ = Write("token", std::string(kToken) + "\n");
  }
  ~AppConnectionTest() override { std::filesystem::remove_all(dir_); }

  std::string Write(const std::string& name, const std::string& text, mode_t mode = 0600) {
    const std::string path = dir_ + "/" + name;
    std::ofstream(path) << text;
    ::chmod(path.c_str(), mode);
    return path;
  }

  std::string dir_, token_file_;
};

TEST_F(AppConnectionTest, SettingsReachTheClientInOrderOfPrecedence) {
  const testing::TestCerts& c = testing::MakeTestCerts();
  env_["HOME"] = dir_;
  std::filesystem::create_directories(dir_ + "/.config/gemmprof");
  std::ofstream(dir_ + "/.config/gemmprof/config.toml")
      << "server = \"gpu-node:7000\"\ntls_ca = \"" << c.ca_pem << "\"\ntoken_file = \"~/token\"\n"
      << "timeout = 9\n";
  Result r = Run({"jobs"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  EXPECT_EQ(last_settings_.address, "gpu-node:7000");
  EXPECT_TRUE(last_settings_.tls);
  EXPECT_EQ(last_settings_.token, kToken);
  EXPECT_EQ(last_settings_.timeout_s, 9);

  env_["GEMMPROF_SERVER"] = "env-node:7001";
  env_["GEMMPROF_TIMEOUT"] = "8";
  r = Run({"jobs"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(last_settings_.address, "env-node:7001");
  EXPECT_EQ(last_settings_.timeout_s, 8);

  // Global flags before or after the command.
  r = Run({"--server", "flag-node:7002", "jobs", "--timeout", "7"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(last_settings_.address, "flag-node:7002");
  EXPECT_EQ(last_settings_.timeout_s, 7);
  r = Run({"watch", "7", "--server=flag-node:7003"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(last_settings_.address, "flag-node:7003");
}

TEST_F(AppConnectionTest, CommandsWithoutAServerReadNoSettings) {
  env_["GEMMPROF_CONFIG"] = dir_ + "/missing.toml";
  env_["GEMMPROF_TOKEN_FILE"] = dir_ + "/missing-token";
  std::vector<std::string> plan = {"plan"};
  plan.insert(plan.end(), testing::kSeed.begin(), testing::kSeed.end());
  EXPECT_EQ(Run(plan).code, 0);
  EXPECT_EQ(Run({"token", "new", "--name", "a", "--role", "read"}).code, 0);
  EXPECT_EQ(Run({"jobs"}).code, kExitUsage);
}

TEST_F(AppConnectionTest, BadConnectionValuesAreUsageErrors) {
  const testing::TestCerts& c = testing::MakeTestCerts();
  const std::string empty = Write("empty", "");
  const std::string two = Write("two", std::string(kToken) + "\n" + kToken + "\n");
  const std::string bad_syntax = Write("syntax.toml", "server = \"gpu:1\"\ntls = yes\n");
  const std::string unknown = Write("unknown.toml", "\n\ntokenfile = \"t\"\n");
  const std::string wrong_type = Write("type.toml", "server = 50051\n");
  const std::string bad_relative = Write("relative.toml", "tls_ca = \"certs/ca.pem\"\n");
  const std::vector<BadCase> cases = {
      {{"--timeout", "0", "jobs"}, "--timeout"},
      {{"--timeout", "3601", "jobs"}, "--timeout"},
      {{"--timeout", "abc", "jobs"}, "--timeout: value abc is not an integer"},
      {{"--timeout", "1.5", "jobs"}, "--timeout"},
      {{"--timeout", "99999999999999999999", "jobs"}, "--timeout"},
      {{"--timeout"}, "--timeout"},
      {{"--tls=maybe", "jobs"}, "--tls"},
      {{"--tls-ca", dir_ + "/missing.pem", "jobs"}, "--tls-ca: \"" + dir_ + "/missing.pem\""},
      {{"--tls-ca", token_file_, "jobs"}, "holds no PEM certificate"},
      {{"--tls-cert", c.client_pem, "jobs"}, "give both --tls-cert and --tls-key"},
      {{"--tls-key", c.client_key, "jobs"}, "give both --tls-cert and --tls-key"},
      {{"--tls-cert", c.client_pem, "--tls-key", c.server_key, "jobs"}, "does not belong"},
      {{"--tls-server-name", "gpu", "jobs"}, "needs TLS"},
      {{"--token-file", dir_ + "/missing", "jobs"}, "--token-file: \"" + dir_ + "/missing\""},
      {{"--token-file", empty, "jobs"}, "\"" + empty + "\" is empty"},
      {{"--token-file", two, "jobs"}, "holds more than one token"},
      {{"--server", "gpu-node:50051", "--token-file", token_file_, "jobs"},
       "refusing to send the token from --token-file " + token_file_ +
           " in plaintext to gpu-node:50051"},
      {{"--config", dir_ + "/missing.toml", "jobs"},
       "config file " + dir_ + "/missing.toml does not exist"},
      {{"--config", bad_syntax, "jobs"}, "config file " + bad_syntax + ":2: "},
      {{"--config", unknown, "jobs"},
       "config file " + unknown + ":3: unknown key \"tokenfile\"; valid keys: server, tls,"},
      {{"--config", wrong_type, "jobs"},
       "config file " + wrong_type + ":1: server must be a string in quotes, not an integer"},
      {{"--config", bad_relative, "jobs"},
       "tls_ca (" + bad_relative + ":1): \"" + dir_ + "/certs/ca.pem\" cannot be read"},
      {{"--config", dir_, "jobs"}, "is a directory"},
  };
  for (const BadCase& c : cases) {
    const Result r = Run(c.args);
    ExpectUsageError(r, c);
    EXPECT_THAT(r.err, Not(HasSubstr(kToken)));
  }
}

TEST_F(AppConnectionTest, BadEnvironmentValuesAreUsageErrors) {
  const testing::TestCerts& c = testing::MakeTestCerts();
  const std::vector<std::pair<std::map<std::string, std::string>, std::string>> cases = {
      {{{"GEMMPROF_SERVER", "gpu-node"}}, "GEMMPROF_SERVER: \"gpu-node\" has no port"},
      {{{"GEMMPROF_TIMEOUT", "0"}}, "GEMMPROF_TIMEOUT: \"0\" is not a whole number"},
      {{{"GEMMPROF_TIMEOUT", "ten"}}, "GEMMPROF_TIMEOUT: \"ten\""},
      {{{"GEMMPROF_TLS", "yes"}}, "GEMMPROF_TLS: \"yes\" is not one of 1, 0, true, false"},
      {{{"GEMMPROF_TLS_CA", dir_ + "/none"}}, "GEMMPROF_TLS_CA: \"" + dir_ + "/none\""},
      {{{"GEMMPROF_TLS_CERT", c.client_pem}}, "GEMMPROF_TLS_CERT: a client certificate needs"},
      {{{"GEMMPROF_TLS_KEY", c.client_key}}, "GEMMPROF_TLS_KEY: a client certificate needs"},
      {{{"GEMMPROF_CONFIG", dir_ + "/none.toml"}}, "config file " + dir_ + "/none.toml"},
      {{{"GEMMPROF_TOKEN_FILE", dir_ + "/none"}}, "GEMMPROF_TOKEN_FILE: \"" + dir_ + "/none\""},
      {{{"GEMMPROF_TOKEN", std::string(kToken) + " x"}}, "GEMMPROF_TOKEN: holds more than one"},
      {{{"GEMMPROF_TOKEN", kToken}, {"GEMMPROF_SERVER", "10.1.2.3:50051"}},
       "refusing to send the token from GEMMPROF_TOKEN in plaintext to 10.1.2.3:50051"},
  };
  for (const auto& [env, expect] : cases) {
    env_ = env;
    const Result r = Run({"jobs"});
    ExpectUsageError(r, {{"jobs"}, expect});
    EXPECT_THAT(r.err, Not(HasSubstr(kToken)));
  }
}

TEST_F(AppConnectionTest, TokenGoesToLoopbackAndOverTls) {
  const testing::TestCerts& c = testing::MakeTestCerts();
  for (const char* server : {"127.0.0.1:50051", "localhost:50051", "[::1]:50051"}) {
    const Result r = Run({"--server", server, "--token-file", token_file_, "jobs"});
    EXPECT_EQ(r.code, 0) << server << r.err;
    EXPECT_EQ(last_settings_.token, kToken);
  }
  const Result tls =
      Run({"--server", "gpu-node:50051", "--tls-ca", c.ca_pem, "--token-file", token_file_,
           "--tls-cert", c.client_pem, "--tls-key", c.client_key, "jobs"});
  EXPECT_EQ(tls.code, 0) << tls.err;
  EXPECT_TRUE(last_settings_.tls);
  EXPECT_FALSE(last_settings_.tls_cert_pem.empty());
}

TEST_F(AppConnectionTest, ReadableTokenFileWarnsAndGoesOn) {
  const std::string shared = Write("shared", std::string(kToken) + "\n", 0640);
  const Result r = Run({"--token-file", shared, "jobs"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.err, "gemmprof: warning: token file " + shared +
                       " can be read by others (mode 0640); run chmod 600 " + shared + "\n");
}

TEST_F(AppConnectionTest, TokenNewPrintsTheTokenAndItsTokensFileLine) {
  const Result r = Run({"token", "new", "--name", "alice@lab-1.x_y", "--role", "submit"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.connects, 0);
  const size_t nl = r.out.find('\n');
  ASSERT_NE(nl, std::string::npos);
  const std::string token = r.out.substr(0, nl);
  EXPECT_THAT(token, ::testing::MatchesRegex("gpt_[A-Za-z0-9_-]{43}"));
  EXPECT_EQ(r.out.substr(nl + 1), "alice@lab-1.x_y submit " + wire::TokenSha256Hex(token) + "\n");
  EXPECT_THAT(r.err, HasSubstr("--tokens file"));
  EXPECT_THAT(r.err, Not(HasSubstr(token)));
  // Fresh every time.
  EXPECT_NE(Run({"token", "new", "--name", "a", "--role", "read"}).out.substr(0, nl), token);
}

TEST_F(AppConnectionTest, TokenNewAsJson) {
  const Result r = Run({"token", "new", "--name", "ci", "--role", "admin", "--format", "json"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  const auto j = nlohmann::json::parse(r.out);
  const std::string token = j.at("token");
  EXPECT_EQ(j.at("name"), "ci");
  EXPECT_EQ(j.at("role"), "admin");
  EXPECT_EQ(j.at("sha256"), wire::TokenSha256Hex(token));
  EXPECT_EQ(j.at("tokens_file_line"), "ci admin " + wire::TokenSha256Hex(token));
}

TEST_F(AppConnectionTest, TokenNewBadValues) {
  const std::string rule = "must be 1..64 characters of A-Z a-z 0-9 . _ @ -";
  const std::vector<BadCase> cases = {
      {{"token", "new", "--name", "", "--role", "read"}, "--name: \"\" " + rule},
      {{"token", "new", "--name", std::string(65, 'a'), "--role", "read"}, rule},
      {{"token", "new", "--name", "al ice", "--role", "read"}, "--name: \"al ice\" " + rule},
      {{"token", "new", "--name", "a/b", "--role", "read"}, rule},
      {{"token", "new", "--name", "caf\xc3\xa9", "--role", "read"}, rule},
      {{"token", "new", "--name", "a:b", "--role", "read"}, rule},
      {{"token", "new", "--name", "alice", "--role", "root"},
       "--role: \"root\" is not a role; valid: read, submit, admin"},
      {{"token", "new", "--name", "alice", "--role", "Read"}, "--role: \"Read\""},
      {{"token", "new", "--name", "alice", "--role", "read", "--format", "yaml"},
       "--format: unknown format \"yaml\"; valid: text, json"},
      {{"token", "new", "--role", "read"}, "--name"},
      {{"token", "new", "--name", "alice"}, "--role"},
      {{"token"}, "subcommand"},
      {{"token", "old"}, "unknown token command \"old\"; valid: new"},
  };
  for (const BadCase& c : cases) ExpectUsageError(Run(c.args), c);
  EXPECT_EQ(Run({"token", "new", "--name", std::string(64, 'a'), "--role", "read"}).code, 0);
}

}  // namespace
}  // namespace gemmprof::client
