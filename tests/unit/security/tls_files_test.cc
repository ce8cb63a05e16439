#include "server/security/tls_files.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <random>

#include "server/security/reloadable_tls.h"
#include "tests/support/temp_dir.h"
#include "tests/support/test_pki.h"

namespace gemmprof::security {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

class TlsFilesTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new testing::TempDir();
    auto a = testing::MakeTestPki(dir_->path().string(), "a");
    auto b = testing::MakeTestPki(dir_->path().string(), "b");
    ASSERT_TRUE(a.ok() && b.ok()) << a.status() << b.status();
    a_ = new testing::TestPki(*a);
    b_ = new testing::TestPki(*b);
  }
  static void TearDownTestSuite() {
    delete a_;
    delete b_;
    delete dir_;
  }
  // A file under a per-test directory.
  std::string File(const std::string& name, const std::string& content) {
    const std::string path = scratch_.File(name);
    testing::WriteTextFile(path, content);
    return path;
  }
  TlsFiles Good() const { return {a_->server_cert, a_->server_key, ""}; }

  static testing::TempDir* dir_;
  static testing::TestPki* a_;
  static testing::TestPki* b_;
  testing::TempDir scratch_;
};
testing::TempDir* TlsFilesTest::dir_ = nullptr;
testing::TestPki* TlsFilesTest::a_ = nullptr;
testing::TestPki* TlsFilesTest::b_ = nullptr;

TEST_F(TlsFilesTest, GoodFilesLoad) {
  auto m = LoadTlsMaterial({a_->server_cert, a_->server_key, a_->ca_cert});
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(m->subject, "CN=localhost");
  EXPECT_FALSE(m->not_after.empty());
  EXPECT_THAT(m->cert_chain_pem, HasSubstr("BEGIN CERTIFICATE"));
  EXPECT_THAT(m->client_ca_pem, HasSubstr("BEGIN CERTIFICATE"));
}

struct BadCase {
  std::string what;
  TlsFiles files;
  std::string expected;  // the message starts with this
};

TEST_F(TlsFilesTest, EveryBadFileIsOneClearLineNamingTheFlagAndPath) {
  const std::string key_pem = testing::ReadTextFile(a_->server_key);
  const std::string cert_pem = testing::ReadTextFile(a_->server_cert);
  const std::string missing = scratch_.File("missing.pem");
  const std::string empty = File("empty.pem", "");
  const std::string garbage = File("garbage.pem", "-----BEGIN CERTIFICATE-----\nnot base64!\n");
  const std::string text = File("text.pem", "hello\n");
  const std::string dir = scratch_.path().string();
  const std::string half = File("half.pem", cert_pem.substr(0, cert_pem.size() / 2));
  const std::vector<BadCase> cases = {
      {"missing cert", {missing, a_->server_key, ""}, "--tls-cert: cannot read '" + missing + "'"},
      {"missing key", {a_->server_cert, missing, ""}, "--tls-key: cannot read '" + missing + "'"},
      {"missing ca", {a_->server_cert, a_->server_key, missing}, "--tls-client-ca: cannot read"},
      {"dir cert", {dir, a_->server_key, ""}, "--tls-cert: '" + dir + "' is a directory"},
      {"dir key", {a_->server_cert, dir, ""}, "--tls-key: '" + dir + "' is a directory"},
      {"dir ca", {a_->server_cert, a_->server_key, dir}, "--tls-client-ca: '" + dir + "' is a dir"},
      {"empty cert", {empty, a_->server_key, ""}, "--tls-cert: '" + empty + "' is empty"},
      {"empty key", {a_->server_cert, empty, ""}, "--tls-key: '" + empty + "' is empty"},
      {"empty ca",
       {a_->server_cert, a_->server_key, empty},
       "--tls-client-ca: '" + empty + "' is empty"},
      {"garbage cert",
       {garbage, a_->server_key, ""},
       "--tls-cert: '" + garbage + "' holds no PEM certificate"},
      {"text cert",
       {text, a_->server_key, ""},
       "--tls-cert: '" + text + "' holds no PEM certificate"},
      {"half cert",
       {half, a_->server_key, ""},
       "--tls-cert: '" + half + "' holds no PEM certificate"},
      {"key as cert",
       {a_->server_key, a_->server_key, ""},
       "--tls-cert: '" + a_->server_key + "' holds no PEM"},
      {"cert as key",
       {a_->server_cert, a_->server_cert, ""},
       "--tls-key: '" + a_->server_cert + "' holds no unencrypted PEM private key"},
      {"garbage key",
       {a_->server_cert, garbage, ""},
       "--tls-key: '" + garbage + "' holds no unencrypted"},
      {"other key",
       {a_->server_cert, b_->server_key, ""},
       "--tls-key: '" + b_->server_key + "' does not match the certificate in --tls-cert '" +
           a_->server_cert + "'"},
      {"client key",
       {a_->server_cert, a_->client_key, ""},
       "--tls-key: '" + a_->client_key + "' does not match"},
      {"garbage ca",
       {a_->server_cert, a_->server_key, garbage},
       "--tls-client-ca: '" + garbage + "' holds no PEM certificate"},
      {"key as ca",
       {a_->server_cert, a_->server_key, a_->server_key},
       "--tls-client-ca: '" + a_->server_key + "' holds no PEM"},
      {"no key", {a_->server_cert, "", ""}, "--tls-cert and --tls-key go together"},
      {"no cert", {"", a_->server_key, ""}, "--tls-cert and --tls-key go together"},
  };
  for (const BadCase& c : cases) {
    auto m = LoadTlsMaterial(c.files);
    ASSERT_FALSE(m.ok()) << c.what;
    EXPECT_EQ(m.status().code(), absl::StatusCode::kInvalidArgument) << c.what;
    const std::string msg(m.status().message());
    EXPECT_THAT(msg, StartsWith(c.expected)) << c.what;
    EXPECT_EQ(msg.find('\n'), std::string::npos) << c.what;
    EXPECT_THAT(msg, Not(HasSubstr("PRIVATE KEY-----\n"))) << c.what;
  }
}

TEST_F(TlsFilesTest, AnEncryptedKeyIsRefusedWithoutAskingForAPassPhrase) {
  const std::string encrypted = scratch_.File("encrypted.key");
  ASSERT_EQ(std::system(("openssl pkey -in '" + a_->server_key +
                         "' -aes128 -passout pass:x -out '" + encrypted + "' >/dev/null 2>&1")
                            .c_str()),
            0);
  auto m = LoadTlsMaterial({a_->server_cert, encrypted, ""});
  ASSERT_FALSE(m.ok());
  EXPECT_THAT(std::string(m.status().message()), HasSubstr("holds no unencrypted PEM private key"));
}

TEST_F(TlsFilesTest, RandomBytesInAnySlotAreRefusedCleanly) {
  std::mt19937_64 rng(11);
  const std::string header = "-----BEGIN CERTIFICATE-----\n";
  for (int i = 0; i < 60; ++i) {
    std::string blob(1 + rng() % 3000, '\0');
    for (char& c : blob) c = static_cast<char>(rng());
    if (i % 2 == 0) blob = header + blob;
    const std::string path = File("random" + std::to_string(i), blob);
    const int slot = i % 3;
    TlsFiles f{a_->server_cert, a_->server_key, a_->ca_cert};
    (slot == 0 ? f.cert_path : slot == 1 ? f.key_path : f.client_ca_path) = path;
    auto m = LoadTlsMaterial(f);
    ASSERT_FALSE(m.ok()) << i;
    EXPECT_THAT(std::string(m.status().message()), StartsWith(slot == 0   ? "--tls-cert: '"
                                                              : slot == 1 ? "--tls-key: '"
                                                                          : "--tls-client-ca: '"));
  }
}

TEST_F(TlsFilesTest, ReloadTakesNewFilesAndKeepsTheOldOnesOnError) {
  const std::string cert = File("server.pem", testing::ReadTextFile(a_->server_cert));
  const std::string key = File("server.key", testing::ReadTextFile(a_->server_key));
  auto tls = ReloadableTls::Create({cert, key, ""});
  ASSERT_TRUE(tls.ok()) << tls.status();
  EXPECT_THAT((*tls)->Describe(), HasSubstr("certificate CN=localhost, valid until"));
  EXPECT_FALSE((*tls)->mutual());
  const std::string before = (*tls)->Describe();

  // A half-done replacement (new certificate, old key) is refused; the old pair stays.
  testing::WriteTextFile(cert, testing::ReadTextFile(b_->server_cert));
  absl::Status mismatch = (*tls)->Reload();
  EXPECT_THAT(std::string(mismatch.message()), HasSubstr("does not match"));
  EXPECT_EQ((*tls)->Describe(), before);

  testing::WriteTextFile(key, testing::ReadTextFile(b_->server_key));
  EXPECT_TRUE((*tls)->Reload().ok());

  testing::WriteTextFile(cert, "");
  EXPECT_THAT(std::string((*tls)->Reload().message()), HasSubstr("is empty"));

  auto mutual = ReloadableTls::Create({a_->server_cert, a_->server_key, a_->ca_cert});
  ASSERT_TRUE(mutual.ok());
  EXPECT_TRUE((*mutual)->mutual());
  EXPECT_THAT((*mutual)->Describe(), HasSubstr("client certificates required"));
  EXPECT_FALSE(ReloadableTls::Create({a_->server_cert, b_->server_key, ""}).ok());
}

}  // namespace
}  // namespace gemmprof::security
