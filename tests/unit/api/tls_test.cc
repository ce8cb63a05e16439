// TLS and mTLS on a real in-process server, and certificates replaced while it serves.
#include <gmock/gmock.h>

#include "tests/unit/api/secure_fixture.h"

namespace gemmprof::api {
namespace {

using ::testing::HasSubstr;

class TlsTest : public SecureApiTest {
 protected:
  static void SetUpTestSuite() {
    pki_dir_ = new testing::TempDir();
    auto a = testing::MakeTestPki(pki_dir_->path().string(), "a");
    auto b = testing::MakeTestPki(pki_dir_->path().string(), "b");
    ASSERT_TRUE(a.ok() && b.ok()) << a.status() << b.status();
    a_ = new testing::TestPki(*a);
    b_ = new testing::TestPki(*b);
  }
  static void TearDownTestSuite() {
    delete a_;
    delete b_;
    delete pki_dir_;
  }

  // Serves TLS with copies of PKI a's server files (so a test may replace them).
  void StartTls(bool mutual, std::shared_ptr<security::AccessControl> access = nullptr) {
    cert_ = dir_.File("server.pem");
    key_ = dir_.File("server.key");
    ca_ = dir_.File("client-ca.pem");
    testing::WriteTextFile(cert_, testing::ReadTextFile(a_->server_cert));
    testing::WriteTextFile(key_, testing::ReadTextFile(a_->server_key));
    testing::WriteTextFile(ca_, testing::ReadTextFile(a_->ca_cert));
    auto tls = security::ReloadableTls::Create({cert_, key_, mutual ? ca_ : ""});
    ASSERT_TRUE(tls.ok()) << tls.status();
    tls_ = *tls;
    ServerOptions o;
    o.tls = tls_;
    o.access = std::move(access);
    Start(o);
  }

  static std::string Pem(const std::string& path) { return testing::ReadTextFile(path); }

  // ListDevices on `channel`, with an optional token.
  static grpc::Status Devices(const std::shared_ptr<grpc::Channel>& channel,
                              const std::string& token = "") {
    auto stub = v1::GemmProf::NewStub(channel);
    v1::ListDevicesResponse resp;
    return stub->ListDevices(Ctx(token).get(), v1::ListDevicesRequest(), &resp);
  }

  static testing::TempDir* pki_dir_;
  static testing::TestPki* a_;
  static testing::TestPki* b_;
  std::shared_ptr<security::ReloadableTls> tls_;
  std::string cert_, key_, ca_;
};
testing::TempDir* TlsTest::pki_dir_ = nullptr;
testing::TestPki* TlsTest::a_ = nullptr;
testing::TestPki* TlsTest::b_ = nullptr;

TEST_F(TlsTest, AClientThatTrustsTheCaConnects) {
  StartTls(false);
  grpc::Status s = Devices(TlsChannel(Pem(a_->ca_cert)));
  EXPECT_TRUE(s.ok()) << s.error_message();
}

TEST_F(TlsTest, AClientWithoutTheCaCannotConnect) {
  StartTls(false);
  // Trusting another CA, or the system's roots: the handshake fails.
  grpc::Status other = Devices(TlsChannel(Pem(b_->ca_cert)));
  EXPECT_EQ(other.error_code(), grpc::StatusCode::UNAVAILABLE) << other.error_message();
  grpc::SslCredentialsOptions system_roots;
  grpc::ChannelArguments args;
  args.SetInt("gemmprof.test.channel", 99);
  grpc::Status system =
      Devices(grpc::CreateCustomChannel(Address(), grpc::SslCredentials(system_roots), args));
  EXPECT_EQ(system.error_code(), grpc::StatusCode::UNAVAILABLE);
  // Plaintext to a TLS port does not get through either.
  grpc::Status plain = Devices(grpc::CreateChannel(Address(), grpc::InsecureChannelCredentials()));
  EXPECT_EQ(plain.error_code(), grpc::StatusCode::UNAVAILABLE);
}

TEST_F(TlsTest, MutualTlsNeedsAClientCertificateFromTheCa) {
  StartTls(true);
  grpc::Status without = Devices(TlsChannel(Pem(a_->ca_cert)));
  EXPECT_EQ(without.error_code(), grpc::StatusCode::UNAVAILABLE) << without.error_message();
  grpc::Status wrong_ca =
      Devices(TlsChannel(Pem(a_->ca_cert), Pem(b_->client_cert), Pem(b_->client_key)));
  EXPECT_EQ(wrong_ca.error_code(), grpc::StatusCode::UNAVAILABLE);
  grpc::Status with =
      Devices(TlsChannel(Pem(a_->ca_cert), Pem(a_->client_cert), Pem(a_->client_key)));
  EXPECT_TRUE(with.ok()) << with.error_message();
}

TEST_F(TlsTest, TokensWorkOverTls) {
  StartTls(false, Tokens());
  auto channel = TlsChannel(Pem(a_->ca_cert));
  EXPECT_EQ(Devices(channel).error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_TRUE(Devices(channel, kReadToken).ok());
}

TEST_F(TlsTest, AfterAReloadNewConnectionsSeeTheNewCertificate) {
  StartTls(false);
  auto before = TlsChannel(Pem(a_->ca_cert));
  ASSERT_TRUE(Devices(before).ok());
  const int64_t deliveries = tls_->deliveries();
  // A job in flight across the reload.
  runner_.Hold();
  auto stub = v1::GemmProf::NewStub(before);
  const int64_t job = Submit(*stub, "");
  ASSERT_TRUE(runner_.WaitForRunsStarted(1));

  testing::WriteTextFile(cert_, Pem(b_->server_cert));
  testing::WriteTextFile(key_, Pem(b_->server_key));
  ASSERT_TRUE(tls_->Reload().ok());

  grpc::Status with_b = Devices(TlsChannel(Pem(b_->ca_cert)));
  EXPECT_TRUE(with_b.ok()) << with_b.error_message();
  EXPECT_EQ(tls_->deliveries(), deliveries + 1);
  EXPECT_EQ(Devices(TlsChannel(Pem(a_->ca_cert))).error_code(), grpc::StatusCode::UNAVAILABLE);
  // The connection made before the reload goes on, and so does the job.
  EXPECT_TRUE(Devices(before).ok());
  runner_.Release();
  v1::WatchJobRequest req;
  req.set_job_id(job);
  auto ctx = Ctx("");
  auto reader = stub->WatchJob(ctx.get(), req);
  v1::JobEvent ev, last;
  while (reader->Read(&ev)) last = ev;
  EXPECT_TRUE(reader->Finish().ok());
  EXPECT_EQ(last.job().state(), "succeeded");
}

TEST_F(TlsTest, AFailedReloadKeepsServingTheOldCertificate) {
  StartTls(true);
  testing::WriteTextFile(cert_, "-----BEGIN CERTIFICATE-----\ngarbage\n");
  absl::Status s = tls_->Reload();
  EXPECT_THAT(std::string(s.message()), HasSubstr("--tls-cert: '" + cert_ + "' holds no PEM"));
  testing::WriteTextFile(cert_, Pem(a_->server_cert));
  testing::WriteTextFile(ca_, "");
  EXPECT_THAT(std::string(tls_->Reload().message()), HasSubstr("--tls-client-ca"));
  grpc::Status still =
      Devices(TlsChannel(Pem(a_->ca_cert), Pem(a_->client_cert), Pem(a_->client_key)));
  EXPECT_TRUE(still.ok()) << still.error_message();
}

TEST_F(TlsTest, AReloadedClientCaDecidesWhichClientsGetIn) {
  StartTls(true);
  testing::WriteTextFile(ca_, Pem(b_->ca_cert));
  ASSERT_TRUE(tls_->Reload().ok());
  EXPECT_TRUE(
      Devices(TlsChannel(Pem(a_->ca_cert), Pem(b_->client_cert), Pem(b_->client_key))).ok());
  EXPECT_EQ(
      Devices(TlsChannel(Pem(a_->ca_cert), Pem(a_->client_cert), Pem(a_->client_key))).error_code(),
      grpc::StatusCode::UNAVAILABLE);
}

}  // namespace
}  // namespace gemmprof::api
