// Connection settings: precedence flags > environment > config file, TLS files, the
// token (file or variable) and when it may be sent, with bad values of each.
#include "client/connection.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "test_certs.h"

namespace gemmprof::client {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

constexpr char kToken[] = "gpt_S3CRET-token_never-printed";

class ConnectionTest : public ::testing::Test {
 protected:
  ConnectionTest()
      : dir_(::testing::TempDir() + "gemmprof_connection_test_" + std::to_string(::getpid())) {
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    token_file_ = Write("token", std::string(kToken) + "\n", 0600);
  }
  ~ConnectionTest() override { std::filesystem::remove_all(dir_); }

  std::string Write(const std::string& name, const std::string& text, mode_t mode = 0600) {
    const std::string path = dir_ + "/" + name;
    std::ofstream(path) << text;
    ::chmod(path.c_str(), mode);
    return path;
  }

  absl::StatusOr<ConnectionSettings> Resolve(const ConnectionFlags& flags) {
    warnings_.str("");
    return ResolveConnection(
        flags,
        [this](const std::string& name) -> std::optional<std::string> {
          const auto it = env_.find(name);
          if (it == env_.end()) return std::nullopt;
          return it->second;
        },
        warnings_);
  }

  // Fails with InvalidArgument holding `expect` and never the token.
  void ExpectError(const ConnectionFlags& flags, const std::string& expect) {
    const auto s = Resolve(flags);
    ASSERT_FALSE(s.ok()) << expect;
    EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument) << s.status();
    EXPECT_THAT(std::string(s.status().message()), HasSubstr(expect));
    EXPECT_THAT(std::string(s.status().message()), Not(HasSubstr(kToken)));
    EXPECT_THAT(warnings_.str(), Not(HasSubstr(kToken)));
  }

  std::string dir_, token_file_;
  std::map<std::string, std::string> env_;
  std::ostringstream warnings_;
};

TEST_F(ConnectionTest, DefaultsWithNothingGiven) {
  const auto s = Resolve({});
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->address, "127.0.0.1:50051");
  EXPECT_FALSE(s->tls);
  EXPECT_TRUE(s->token.empty());
  EXPECT_EQ(s->timeout_s, kDefaultTimeoutS);
}

TEST_F(ConnectionTest, FlagsBeatEnvironmentBeatsConfigFile) {
  const std::string config = Write("config.toml",
                                   "server = \"file-host:1\"\ntimeout = 11\n"
                                   "tls_server_name = \"file-name\"\ntls = true\n");
  env_["GEMMPROF_CONFIG"] = config;
  auto s = Resolve({});
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->address, "file-host:1");
  EXPECT_EQ(s->timeout_s, 11);
  EXPECT_TRUE(s->tls);
  EXPECT_EQ(s->tls_server_name, "file-name");

  env_["GEMMPROF_SERVER"] = "env-host:2";
  env_["GEMMPROF_TIMEOUT"] = "22";
  env_["GEMMPROF_TLS_SERVER_NAME"] = "env-name";
  s = Resolve({});
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->address, "env-host:2");
  EXPECT_EQ(s->timeout_s, 22);
  EXPECT_EQ(s->tls_server_name, "env-name");

  ConnectionFlags flags;
  flags.server = "flag-host:3";
  flags.timeout_s = 33;
  flags.tls_server_name = "flag-name";
  s = Resolve(flags);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->address, "flag-host:3");
  EXPECT_EQ(s->timeout_s, 33);
  EXPECT_EQ(s->tls_server_name, "flag-name");
}

TEST_F(ConnectionTest, ConfigFileChoice) {
  const std::string xdg = dir_ + "/xdg";
  std::filesystem::create_directories(xdg + "/gemmprof");
  std::ofstream(xdg + "/gemmprof/config.toml") << "server = \"xdg-host:1\"\n";
  env_["XDG_CONFIG_HOME"] = xdg;
  EXPECT_EQ(Resolve({})->address, "xdg-host:1");
  // --config beats GEMMPROF_CONFIG beats the default file.
  env_["GEMMPROF_CONFIG"] = Write("env.toml", "server = \"env-file:2\"\n");
  EXPECT_EQ(Resolve({})->address, "env-file:2");
  ConnectionFlags flags;
  flags.config = Write("flag.toml", "server = \"flag-file:3\"\n");
  EXPECT_EQ(Resolve(flags)->address, "flag-file:3");
  // A missing default file is fine; a named one must exist.
  env_.erase("GEMMPROF_CONFIG");
  env_["XDG_CONFIG_HOME"] = dir_ + "/no-such-xdg";
  EXPECT_TRUE(Resolve({}).ok());
  env_["GEMMPROF_CONFIG"] = dir_ + "/missing.toml";
  ExpectError({}, "config file " + dir_ + "/missing.toml does not exist");
  flags.config = dir_ + "/missing-too.toml";
  ExpectError(flags, "config file " + dir_ + "/missing-too.toml does not exist");
  flags.config = "";
  ExpectError(flags, "--config: the path is empty");
}

TEST_F(ConnectionTest, BadValuesNameTheirSource) {
  ConnectionFlags flags;
  flags.server = "nonsense";
  ExpectError(flags, "--server: \"nonsense\" has no port");
  env_["GEMMPROF_SERVER"] = "h:0";
  ExpectError({}, "GEMMPROF_SERVER: \"h:0\" has a port outside 1..65535");
  env_.clear();
  for (const char* t : {"0", "3601", "abc", "1.5", "-3", " 5"}) {
    env_["GEMMPROF_TIMEOUT"] = t;
    ExpectError({}, std::string("GEMMPROF_TIMEOUT: \"") + t +
                        "\" is not a whole number of seconds in 1..3600");
  }
  flags = {};
  flags.timeout_s = 0;
  ExpectError(flags, "--timeout: \"0\"");
  env_.clear();
  for (const char* v : {"yes", "on", "TRUE", "2"}) {
    env_["GEMMPROF_TLS"] = v;
    ExpectError({}, std::string("GEMMPROF_TLS: \"") + v + "\" is not one of 1, 0, true, false");
  }
  env_.clear();
  env_["GEMMPROF_CONFIG"] = Write("bad.toml", "\ntimeout = 0\n");
  ExpectError({}, "timeout (" + dir_ + "/bad.toml:2): \"0\" is not a whole number");
  env_["GEMMPROF_CONFIG"] = Write("bad2.toml", "server = \"no-port\"\n");
  ExpectError({}, "server (" + dir_ + "/bad2.toml:1): \"no-port\" has no port");
}

TEST_F(ConnectionTest, TlsFilesAreReadAndChecked) {
  const testing::TestCerts& c = testing::MakeTestCerts();
  ConnectionFlags flags;
  flags.tls_ca = c.ca_pem;
  auto s = Resolve(flags);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_TRUE(s->tls) << "a CA turns TLS on";
  EXPECT_EQ(s->tls_ca_pem, testing::ReadFileText(c.ca_pem));
  flags.tls_cert = c.client_pem;
  flags.tls_key = c.client_key;
  s = Resolve(flags);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->tls_cert_pem, testing::ReadFileText(c.client_pem));
  EXPECT_EQ(s->tls_key_pem, testing::ReadFileText(c.client_key));
  flags = {};
  flags.tls = true;
  s = Resolve(flags);
  ASSERT_TRUE(s.ok());
  EXPECT_TRUE(s->tls);
  EXPECT_TRUE(s->tls_ca_pem.empty()) << "--tls alone: the system's roots";
}

TEST_F(ConnectionTest, BadTlsFiles) {
  const testing::TestCerts& c = testing::MakeTestCerts();
  const std::string not_pem = Write("not.pem", "hello\n");
  ConnectionFlags flags;
  flags.tls_ca = dir_ + "/missing.pem";
  ExpectError(flags, "--tls-ca: \"" + dir_ + "/missing.pem\" cannot be read: No such file");
  flags.tls_ca = dir_;
  ExpectError(flags, "is a directory");
  flags.tls_ca = not_pem;
  ExpectError(flags, "--tls-ca: \"" + not_pem + "\" holds no PEM certificate");
  flags.tls_ca = c.server_key;  // a key is no certificate
  ExpectError(flags, "holds no PEM certificate");

  // mTLS: both or neither, from any mix of sources.
  flags = {};
  flags.tls_cert = c.client_pem;
  ExpectError(flags, "--tls-cert: a client certificate needs its key");
  flags = {};
  flags.tls_key = c.client_key;
  ExpectError(flags, "--tls-key: a client certificate needs its key");
  env_["GEMMPROF_TLS_CERT"] = c.client_pem;
  ExpectError({}, "GEMMPROF_TLS_CERT: a client certificate needs its key");
  flags = {};
  flags.tls_key = c.client_key;
  EXPECT_TRUE(Resolve(flags).ok()) << "cert from the environment, key from a flag";
  flags.tls_key = c.server_key;
  ExpectError(flags, "--tls-key: \"" + c.server_key + "\" does not belong to the client");
  flags.tls_key = not_pem;
  ExpectError(flags, "holds no PEM private key");
  flags.tls_key = Write("enc.key", "-----BEGIN ENCRYPTED PRIVATE KEY-----\nAAAA\n");
  ExpectError(flags, "is encrypted");
  env_.clear();

  flags = {};
  flags.tls_server_name = "gpu-node";
  ExpectError(flags, "--tls-server-name: a TLS server name needs TLS");
}

TEST_F(ConnectionTest, TokenFromFileOrVariable) {
  ConnectionFlags flags;
  flags.token_file = token_file_;
  auto s = Resolve(flags);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->token, kToken) << "the trailing newline is dropped";
  EXPECT_EQ(s->token_source, "--token-file " + token_file_);
  EXPECT_EQ(warnings_.str(), "") << "mode 0600 is private";

  env_["GEMMPROF_TOKEN"] = "gpt_from-env";
  env_["GEMMPROF_TOKEN_FILE"] = Write("env-token", "gpt_from-env-file\r\n");
  EXPECT_EQ(Resolve(flags)->token, kToken) << "--token-file first";
  EXPECT_EQ(Resolve({})->token, "gpt_from-env") << "then GEMMPROF_TOKEN";
  EXPECT_EQ(Resolve({})->token_source, "GEMMPROF_TOKEN");
  env_.erase("GEMMPROF_TOKEN");
  EXPECT_EQ(Resolve({})->token, "gpt_from-env-file") << "then GEMMPROF_TOKEN_FILE";
  env_.erase("GEMMPROF_TOKEN_FILE");
  env_["GEMMPROF_CONFIG"] = Write("config.toml", "token_file = \"token\"\n");
  EXPECT_EQ(Resolve({})->token, kToken) << "then token_file, relative to the config file";
}

TEST_F(ConnectionTest, BadTokens) {
  ConnectionFlags flags;
  flags.token_file = dir_ + "/missing";
  ExpectError(flags, "--token-file: \"" + dir_ + "/missing\" cannot be read");
  flags.token_file = Write("empty", "");
  ExpectError(flags, "--token-file: \"" + dir_ + "/empty\" is empty");
  flags.token_file = Write("blank", " \n\n");
  ExpectError(flags, "\"" + dir_ + "/blank\" is empty");
  flags.token_file = Write("two", std::string(kToken) + "\n" + kToken + "\n");
  ExpectError(flags, "\"" + dir_ + "/two\": holds more than one token");
  flags.token_file = Write("spaced", std::string("gpt_a ") + kToken + "\n");
  ExpectError(flags, "holds more than one token");
  flags.token_file = Write("binary", std::string("gpt_\x01") + kToken);
  ExpectError(flags, "a character a token cannot have");
  flags.token_file = dir_;
  ExpectError(flags, "is a directory");
  flags.token_file = Write("huge", std::string(70000, 'a'));
  ExpectError(flags, "is larger than");
  const std::string unreadable = Write("unreadable", kToken, 0000);
  if (::geteuid() != 0) {  // root reads any file
    flags.token_file = unreadable;
    ExpectError(flags, "cannot be read: Permission denied");
  }
  env_["GEMMPROF_TOKEN"] = std::string(kToken) + " " + kToken;
  ExpectError({}, "GEMMPROF_TOKEN: holds more than one token");
  env_["GEMMPROF_TOKEN"] = std::string(5000, 'x');
  ExpectError({}, "GEMMPROF_TOKEN: the token is longer than 4096");
}

TEST_F(ConnectionTest, ReadableTokenFileWarnsWithoutTheToken) {
  ConnectionFlags flags;
  flags.token_file = Write("shared", std::string(kToken) + "\n", 0644);
  const auto s = Resolve(flags);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(warnings_.str(), "gemmprof: warning: token file " + *flags.token_file +
                                 " can be read by others (mode 0644); run chmod 600 " +
                                 *flags.token_file + "\n");
}

TEST_F(ConnectionTest, TokenOnlyOverTlsOrToLoopback) {
  ConnectionFlags flags;
  flags.token_file = token_file_;
  for (const char* loopback :
       {"127.0.0.1:50051", "127.8.9.10:1", "localhost:5", "LOCALHOST:5", "[::1]:50051"}) {
    flags.server = loopback;
    EXPECT_TRUE(Resolve(flags).ok()) << loopback;
  }
  for (const char* remote :
       {"gpu-node:50051", "10.0.0.7:50051", "128.0.0.1:1", "[::2]:1", "localhost.evil.com:1",
        "127.0.0.1.nip.io:1", "[::ffff:127.0.0.1]:1"}) {
    flags.server = remote;
    ExpectError(flags, std::string("refusing to send the token from --token-file ") + token_file_ +
                           " in plaintext to " + remote + " (not a loopback address); turn TLS on");
  }
  env_["GEMMPROF_TOKEN"] = kToken;
  env_["GEMMPROF_SERVER"] = "gpu-node:50051";
  ExpectError({}, "refusing to send the token from GEMMPROF_TOKEN in plaintext");
  flags = {};
  flags.tls = true;
  EXPECT_TRUE(Resolve(flags).ok()) << "over TLS anywhere";
}

TEST(LoopbackTest, Addresses) {
  EXPECT_TRUE(IsLoopbackAddress("127.0.0.1:1"));
  EXPECT_TRUE(IsLoopbackAddress("127.255.255.254:1"));
  EXPECT_TRUE(IsLoopbackAddress("localhost:1"));
  EXPECT_TRUE(IsLoopbackAddress("[::1]:1"));
  EXPECT_FALSE(IsLoopbackAddress("127.0.0:1"));
  EXPECT_FALSE(IsLoopbackAddress("127.0.0.1.5:1"));
  EXPECT_FALSE(IsLoopbackAddress("127.0.0.256:1"));
  EXPECT_FALSE(IsLoopbackAddress("127..0.1:1"));
  EXPECT_FALSE(IsLoopbackAddress("0.0.0.0:1"));
  EXPECT_FALSE(IsLoopbackAddress("[::]:1"));
  EXPECT_FALSE(IsLoopbackAddress("no-port"));
}

}  // namespace
}  // namespace gemmprof::client
