// The config file: its default path, its keys and types, relative paths, and every
// kind of bad file failing with the file, the line and the key named.
#include "client/config_file.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace gemmprof::client {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

const std::string kPath = "/etc/gemmprof-test/config.toml";
const std::optional<std::string> kHome = "/home/alice";

TEST(ConfigFileTest, DefaultPathFollowsXdg) {
  EXPECT_EQ(DefaultConfigPath("/x/cfg", kHome), "/x/cfg/gemmprof/config.toml");
  EXPECT_EQ(DefaultConfigPath(std::nullopt, kHome), "/home/alice/.config/gemmprof/config.toml");
  // A relative XDG_CONFIG_HOME is invalid by the XDG spec and ignored.
  EXPECT_EQ(DefaultConfigPath("relative", kHome), "/home/alice/.config/gemmprof/config.toml");
  EXPECT_EQ(DefaultConfigPath("", kHome), "/home/alice/.config/gemmprof/config.toml");
  EXPECT_EQ(DefaultConfigPath(std::nullopt, std::nullopt), std::nullopt);
}

TEST(ConfigFileTest, ReadsEveryKeyWithPathsResolved) {
  const auto f = ParseConfigFile(R"(# laptop -> gpu node
server = "gpu-node:50051"   # comment after a value
tls = true

tls_ca = "certs/ca.pem"
tls_cert = "/abs/client.pem"
tls_key = "~/keys/client.key"
tls_server_name = "gpu-node.internal"
token_file = "../tokens/../token"
timeout = 30
)",
                                 kPath, kHome);
  ASSERT_TRUE(f.ok()) << f.status();
  const auto v = [&](const char* k) { return f->entries.at(k).value; };
  EXPECT_EQ(v("server"), "gpu-node:50051");
  EXPECT_EQ(v("tls"), "true");
  EXPECT_EQ(v("tls_ca"), "/etc/gemmprof-test/certs/ca.pem");
  EXPECT_EQ(v("tls_cert"), "/abs/client.pem");
  EXPECT_EQ(v("tls_key"), "/home/alice/keys/client.key");
  EXPECT_EQ(v("tls_server_name"), "gpu-node.internal");
  EXPECT_EQ(v("token_file"), "/etc/token");
  EXPECT_EQ(v("timeout"), "30");
  EXPECT_EQ(f->entries.at("tls_ca").line, 5);
  EXPECT_EQ(f->Source("tls_ca"), "tls_ca (" + kPath + ":5)");
}

TEST(ConfigFileTest, EmptyFileAndCommentsOnlyAreFine) {
  for (const char* text : {"", "\n\n", "# nothing yet\n   \n# server = \"x:1\"\n"}) {
    const auto f = ParseConfigFile(text, kPath, kHome);
    ASSERT_TRUE(f.ok()) << f.status();
    EXPECT_TRUE(f->entries.empty());
  }
}

TEST(ConfigFileTest, BadFilesNameFileLineAndKey) {
  struct Case {
    std::string text;
    std::string expect;
  };
  const std::vector<Case> cases = {
      {"server = gpu:1\n", kPath + ":1: "},              // unquoted string
      {"\n\nserver = \"gpu:1\n", kPath + ":3: "},        // unterminated string
      {"server \"gpu:1\"\n", kPath + ":1: "},            // no '='
      {"server = \"a:1\"\nserver = \"b:1\"\n", ":2: "},  // twice
      {"sever = \"gpu:1\"\n",
       ":1: unknown key \"sever\"; valid keys: server, tls, tls_ca, tls_cert, tls_key, "
       "tls_server_name, token_file, timeout"},
      {"[connection]\nserver = \"gpu:1\"\n", "unknown key \"connection\""},
      {"tls.ca = \"x\"\n",
       "tls must be true or false, not a table" /* a dotted key makes a table */},
      {"server = 50051\n", ":1: server must be a string in quotes, not an integer"},
      {"tls_ca = [\"a\"]\n", "tls_ca must be a path in quotes, not an array"},
      {"tls = \"yes\"\n", "tls must be true or false, not a string"},
      {"tls = 1\n", "tls must be true or false, not an integer"},
      {"timeout = \"30\"\n", "timeout must be a whole number, not a string"},
      {"timeout = 2.5\n", "timeout must be a whole number, not a float"},
      {"token_file = 2024-01-01\n", "token_file must be a path in quotes, not a date/time"},
      {"\ntls_ca = \"\"\n", ":2: tls_ca is empty"},
      {"server = \"\"\n", "server is empty"},
      {"tls_key = \"~bob/key\"\n", "~user paths are not supported"},
  };
  for (const Case& c : cases) {
    const auto f = ParseConfigFile(c.text, kPath, kHome);
    ASSERT_FALSE(f.ok()) << c.text;
    EXPECT_EQ(f.status().code(), absl::StatusCode::kInvalidArgument) << c.text;
    EXPECT_THAT(std::string(f.status().message()), StartsWith("config file " + kPath + ":"))
        << c.text;
    EXPECT_THAT(std::string(f.status().message()), HasSubstr(c.expect)) << c.text;
  }
}

TEST(ConfigFileTest, TildeNeedsHome) {
  const auto f = ParseConfigFile("token_file = \"~/token\"\n", kPath, std::nullopt);
  ASSERT_FALSE(f.ok());
  EXPECT_THAT(std::string(f.status().message()), HasSubstr("HOME is not set"));
}

TEST(ConfigFileTest, LoadingMissingUnreadableAndDirectories) {
  const std::string dir =
      ::testing::TempDir() + "gemmprof_config_test_" + std::to_string(::getpid());
  std::filesystem::create_directories(dir);
  const std::string missing = dir + "/missing.toml";
  // A missing default file is no error; a missing file the user named is.
  const auto quiet = LoadConfigFile(missing, /*must_exist=*/false, kHome);
  ASSERT_TRUE(quiet.ok()) << quiet.status();
  EXPECT_TRUE(quiet->path.empty());
  const auto named = LoadConfigFile(missing, /*must_exist=*/true, kHome);
  EXPECT_EQ(named.status().message(), "config file " + missing + " does not exist");
  EXPECT_THAT(std::string(LoadConfigFile(dir, true, kHome).status().message()),
              HasSubstr("is a directory"));
  // A directory at the default path is an error too: it is not "no file".
  EXPECT_FALSE(LoadConfigFile(dir, false, kHome).ok());

  const std::string good = dir + "/config.toml";
  std::ofstream(good) << "server = \"gpu:7\"\ntls_ca = \"ca.pem\"\n";
  const auto f = LoadConfigFile(good, true, kHome);
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_EQ(f->path, good);
  EXPECT_EQ(f->entries.at("tls_ca").value, dir + "/ca.pem");
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace gemmprof::client
