// The transport over TLS against in-process servers with throwaway certificates: a
// trusted daemon answers (and gets the token), and each mismatch a user can make ends
// in one line that names it: an untrusted CA, a plaintext client to a TLS daemon, a TLS
// client to a plaintext daemon, a missing client certificate, a wrong server name.
#include <gmock/gmock.h>
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include "client/transport.h"
#include "gemmprof/v1/gemmprof.grpc.pb.h"
#include "test_certs.h"

namespace gemmprof::client {
namespace {

namespace v1 = ::gemmprof::v1;
using ::testing::HasSubstr;
using testing::ReadFileText;

// CancelJob (never retried, so a failure is reported at once) answers NOT_FOUND naming
// the authorization it got.
class EchoService : public v1::GemmProf::Service {
  grpc::Status CancelJob(grpc::ServerContext* ctx, const v1::CancelJobRequest*, v1::Job*) override {
    const auto it = ctx->client_metadata().find("authorization");
    const std::string auth =
        it == ctx->client_metadata().end() ? "" : std::string(it->second.data(), it->second.size());
    return {grpc::StatusCode::NOT_FOUND, "auth=[" + auth + "]"};
  }
};

enum class ServerTls { kNone, kTls, kMutual };

std::unique_ptr<grpc::Server> Start(EchoService& service, ServerTls mode, int& port) {
  const testing::TestCerts& c = testing::MakeTestCerts();
  std::shared_ptr<grpc::ServerCredentials> credentials = grpc::InsecureServerCredentials();
  if (mode != ServerTls::kNone) {
    grpc::SslServerCredentialsOptions o(
        mode == ServerTls::kMutual ? GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY
                                   : GRPC_SSL_DONT_REQUEST_CLIENT_CERTIFICATE);
    o.pem_key_cert_pairs.push_back({ReadFileText(c.server_key), ReadFileText(c.server_pem)});
    if (mode == ServerTls::kMutual) o.pem_root_certs = ReadFileText(c.ca_pem);
    credentials = grpc::SslServerCredentials(o);
  }
  grpc::ServerBuilder builder;
  builder.AddListeningPort("127.0.0.1:0", credentials, &port);
  builder.RegisterService(&service);
  return builder.BuildAndStart();
}

class TransportTlsTest : public ::testing::Test {
 protected:
  // Calls a server of `mode` on "localhost:PORT" with `settings`; returns the status.
  absl::Status Call(ServerTls mode, ConnectionSettings settings) {
    int port = 0;
    std::unique_ptr<grpc::Server> server = Start(service_, mode, port);
    EXPECT_NE(server, nullptr);
    settings.address = "localhost:" + std::to_string(port);
    address_ = settings.address;
    auto client = Transport::Connect(settings);
    EXPECT_TRUE(client.ok()) << client.status();
    const absl::Status status = (*client)->CancelJob(1).status();
    server->Shutdown();
    return status;
  }

  static ConnectionSettings TrustingOurCa() {
    ConnectionSettings s;
    s.tls = true;
    s.tls_ca_pem = ReadFileText(testing::MakeTestCerts().ca_pem);
    return s;
  }

  EchoService service_;
  std::string address_;
};

TEST_F(TransportTlsTest, TrustedDaemonAnswersAndGetsTheToken) {
  ConnectionSettings s = TrustingOurCa();
  s.token = "gpt_over-tls";
  const absl::Status status = Call(ServerTls::kTls, s);
  EXPECT_EQ(status.code(), absl::StatusCode::kNotFound) << status;
  EXPECT_EQ(status.message(), "auth=[Bearer gpt_over-tls]");
}

TEST_F(TransportTlsTest, MutualTlsWithAClientCertificate) {
  const testing::TestCerts& c = testing::MakeTestCerts();
  ConnectionSettings s = TrustingOurCa();
  s.tls_cert_pem = ReadFileText(c.client_pem);
  s.tls_key_pem = ReadFileText(c.client_key);
  const absl::Status status = Call(ServerTls::kMutual, s);
  EXPECT_EQ(status.code(), absl::StatusCode::kNotFound) << status;
}

TEST_F(TransportTlsTest, UntrustedCertificatePointsAtTlsCa) {
  ConnectionSettings s = TrustingOurCa();
  s.tls_ca_pem = ReadFileText(testing::MakeTestCerts().other_ca_pem);
  const absl::Status status = Call(ServerTls::kTls, s);
  EXPECT_EQ(status.code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(status.message(),
            "TLS handshake with gemmprofd at " + address_ +
                " failed: its certificate is not trusted (certificate verify failed); give the "
                "CA that signed it with --tls-ca (or GEMMPROF_TLS_CA, tls_ca in the config file)");
}

TEST_F(TransportTlsTest, PlaintextClientToATlsDaemon) {
  const absl::Status status = Call(ServerTls::kTls, ConnectionSettings{});
  EXPECT_EQ(status.code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(std::string(status.message()),
              HasSubstr("if it serves TLS, give --tls-ca CA.pem (or --tls)"));
}

TEST_F(TransportTlsTest, TlsClientToAPlaintextDaemon) {
  const absl::Status status = Call(ServerTls::kNone, TrustingOurCa());
  EXPECT_EQ(status.code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(std::string(status.message()),
              HasSubstr("failed: the daemon does not speak TLS (wrong version number); drop "
                        "--tls/--tls-ca"));
}

TEST_F(TransportTlsTest, DaemonWantingAClientCertificate) {
  const absl::Status status = Call(ServerTls::kMutual, TrustingOurCa());
  EXPECT_EQ(status.code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(std::string(status.message()),
              HasSubstr("if it requires a client certificate, give --tls-cert and --tls-key"));
}

TEST_F(TransportTlsTest, WrongServerName) {
  ConnectionSettings s = TrustingOurCa();
  s.tls_server_name = "gpu-node.example";
  const absl::Status status = Call(ServerTls::kTls, s);
  EXPECT_EQ(status.code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(std::string(status.message()),
              HasSubstr("(Peer name gpu-node.example is not in peer certificate)"));
  EXPECT_THAT(std::string(status.message()), HasSubstr("--tls-server-name"));
  // The certificate's own name works as an override too (an SSH tunnel to 127.0.0.1).
  s.tls_server_name = "localhost";
  EXPECT_EQ(Call(ServerTls::kTls, s).code(), absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace gemmprof::client
