#include "server/security/daemon_security.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/support/temp_dir.h"
#include "tests/support/test_pki.h"
#include "wire/token.h"

namespace gemmprof::security {
namespace {

using ::testing::HasSubstr;

class DaemonSecurityTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto pki = testing::MakeTestPki(dir_.path().string(), "d");
    ASSERT_TRUE(pki.ok()) << pki.status();
    pki_ = *pki;
    testing::WriteTextFile(cert_, testing::ReadTextFile(pki_.server_cert));
    testing::WriteTextFile(key_, testing::ReadTextFile(pki_.server_key));
    testing::WriteTextFile(tokens_, "root admin " + wire::TokenSha256Hex("old") + "\n");
  }
  SecurityOptions Options() const { return {"0.0.0.0:50051", {cert_, key_, ""}, false, tokens_}; }
  static std::string Msg(const absl::Status& s) { return std::string(s.message()); }

  testing::TempDir dir_;
  testing::TestPki pki_;
  std::string cert_ = dir_.File("server.pem"), key_ = dir_.File("server.key");
  std::string tokens_ = dir_.File("tokens");
};

TEST_F(DaemonSecurityTest, FlagsThatDoNotGoTogetherAreRefused) {
  SecurityOptions o = Options();
  o.tls.key_path.clear();
  EXPECT_THAT(Msg(SetUpSecurity(o).status()), HasSubstr("--tls-cert and --tls-key go together"));
  o = Options();
  o.tls = {"", "", pki_.ca_cert};
  EXPECT_THAT(Msg(SetUpSecurity(o).status()), HasSubstr("--tls-client-ca needs --tls-cert"));
  o.tls = {};
  EXPECT_THAT(Msg(SetUpSecurity(o).status()), HasSubstr("not a loopback address"));
  o.insecure = true;
  EXPECT_TRUE(SetUpSecurity(o).ok());
  o.tokens_path = dir_.File("none");
  EXPECT_THAT(Msg(SetUpSecurity(o).status()), HasSubstr("--tokens: cannot read"));
}

TEST_F(DaemonSecurityTest, EverythingOn) {
  SecurityOptions o = Options();
  o.tls.client_ca_path = pki_.ca_cert;
  auto s = SetUpSecurity(o);
  ASSERT_TRUE(s.ok()) << s.status();
  ASSERT_NE(s->tls, nullptr);
  EXPECT_TRUE(s->tls->mutual());
  EXPECT_TRUE(s->access->enabled());
  EXPECT_TRUE(ReloadSecurity(*s).ok());
  LogSecurity(o, *s);  // logs only; must not throw
}

TEST_F(DaemonSecurityTest, ReloadReloadsEachPartOnItsOwn) {
  auto s = SetUpSecurity(Options());
  ASSERT_TRUE(s.ok()) << s.status();
  // A broken certificate does not stop the tokens from reloading.
  testing::WriteTextFile(cert_, "garbage");
  testing::WriteTextFile(tokens_, "root admin " + wire::TokenSha256Hex("new") + "\n");
  absl::Status first = ReloadSecurity(*s);
  EXPECT_THAT(Msg(first), HasSubstr("--tls-cert: '" + cert_ + "' holds no PEM certificate"));
  const std::string header = "Bearer new";
  EXPECT_TRUE(s->access->Authorize({header}, "ListJobs").ok());
  // And broken tokens do not stop the certificate.
  testing::WriteTextFile(cert_, testing::ReadTextFile(pki_.server_cert));
  testing::WriteTextFile(tokens_, "root\n");
  EXPECT_THAT(Msg(ReloadSecurity(*s)), HasSubstr(tokens_ + ":1: expected 'NAME ROLE SHA256HEX'"));
  EXPECT_TRUE(s->tls->Reload().ok());
  EXPECT_TRUE(s->access->Authorize({header}, "ListJobs").ok()) << "the previous tokens stay";
}

TEST_F(DaemonSecurityTest, WithoutTlsAndTokensThereIsNothingToReload) {
  auto s = SetUpSecurity({"127.0.0.1:0", {}, false, ""});
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->tls, nullptr);
  EXPECT_FALSE(s->access->enabled());
  EXPECT_TRUE(ReloadSecurity(*s).ok());
}

}  // namespace
}  // namespace gemmprof::security
