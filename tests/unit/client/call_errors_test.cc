// What a user reads when a call fails: auth errors with the daemon's reason and what to
// do, TLS mismatches with a hint, the deadline with --timeout. The messages gRPC 1.51
// gives for each case are quoted from real runs (transport_tls_test checks them live).
#include "client/call_errors.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace gemmprof::client {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using C = absl::StatusCode;

constexpr char kPrefix[] =
    "failed to connect to all addresses; last error: UNKNOWN: ipv4:10.0.0.7:50051: ";

ConnectionSettings Plain() {
  ConnectionSettings s;
  s.address = "gpu-node:50051";
  return s;
}

ConnectionSettings Tls() {
  ConnectionSettings s = Plain();
  s.tls = true;
  s.tls_ca_pem = "-----BEGIN CERTIFICATE-----";
  return s;
}

std::string Message(C code, const std::string& message, const ConnectionSettings& s) {
  return std::string(DescribeCallError(code, message, s).message());
}

TEST(CallErrorsTest, OkStaysOk) { EXPECT_TRUE(DescribeCallError(C::kOk, "", Plain()).ok()); }

TEST(CallErrorsTest, Unauthenticated) {
  const absl::Status no_token =
      DescribeCallError(C::kUnauthenticated, "missing bearer token", Plain());
  EXPECT_EQ(no_token.code(), C::kUnauthenticated);
  EXPECT_EQ(no_token.message(),
            "unauthenticated: missing bearer token; give a token with --token-file or "
            "GEMMPROF_TOKEN");
  ConnectionSettings with = Tls();
  with.token = "gpt_secret-value";
  with.token_source = "GEMMPROF_TOKEN";
  const std::string refused = Message(C::kUnauthenticated, "unknown token", with);
  EXPECT_EQ(refused, "unauthenticated: unknown token (the token from GEMMPROF_TOKEN was refused)");
  EXPECT_THAT(refused, Not(HasSubstr("gpt_secret-value")));
}

TEST(CallErrorsTest, PermissionDenied) {
  const absl::Status s =
      DescribeCallError(C::kPermissionDenied, "role read may not call SubmitJob", Plain());
  EXPECT_EQ(s.code(), C::kPermissionDenied);
  EXPECT_EQ(s.message(), "permission denied: role read may not call SubmitJob");
}

TEST(CallErrorsTest, TlsHandshakeFailures) {
  const std::string untrusted = Message(
      C::kUnavailable,
      std::string(kPrefix) +
          "Ssl handshake failed: SSL_ERROR_SSL: error:0A000086:SSL routines::certificate verify "
          "failed",
      Tls());
  EXPECT_EQ(untrusted,
            "TLS handshake with gemmprofd at gpu-node:50051 failed: its certificate is not "
            "trusted (certificate verify failed); give the CA that signed it with --tls-ca (or "
            "GEMMPROF_TLS_CA, tls_ca in the config file)");
  const std::string plaintext_daemon = Message(
      C::kUnavailable,
      std::string(kPrefix) +
          "Ssl handshake failed: SSL_ERROR_SSL: error:0A00010B:SSL routines::wrong version number",
      Tls());
  EXPECT_THAT(plaintext_daemon, HasSubstr("the daemon does not speak TLS (wrong version number)"));
  EXPECT_THAT(plaintext_daemon, HasSubstr("drop --tls/--tls-ca"));
  const std::string other = Message(
      C::kUnavailable, std::string(kPrefix) + "Ssl handshake failed: TSI_PROTOCOL_FAILURE", Tls());
  EXPECT_THAT(other, HasSubstr("TLS handshake with gemmprofd at gpu-node:50051 failed ("));
  EXPECT_THAT(other, HasSubstr("check --tls-ca, --tls-cert and --tls-key"));
  const std::string name =
      Message(C::kUnavailable,
              std::string(kPrefix) + "Peer name gpu-node is not in peer certificate", Tls());
  EXPECT_THAT(name, HasSubstr("(Peer name gpu-node is not in peer certificate)"));
  EXPECT_THAT(name, HasSubstr("--tls-server-name"));
}

TEST(CallErrorsTest, ClosedConnectionsHintAtTheMismatch) {
  const std::string closed = std::string(kPrefix) + "Socket closed";
  // A plaintext client closed at once: the daemon may want TLS.
  EXPECT_THAT(Message(C::kUnavailable, closed, Plain()),
              HasSubstr("if it serves TLS, give --tls-ca CA.pem (or --tls)"));
  // A TLS client without a certificate: the daemon may want one.
  EXPECT_THAT(Message(C::kUnavailable, closed, Tls()),
              HasSubstr("if it requires a client certificate, give --tls-cert and --tls-key"));
  ConnectionSettings mtls = Tls();
  mtls.tls_cert_pem = mtls.tls_key_pem = "pem";
  EXPECT_EQ(Message(C::kUnavailable, closed, mtls),
            "cannot reach gemmprofd at gpu-node:50051 (" + closed + ")");
}

TEST(CallErrorsTest, PlainUnreachable) {
  const std::string refused =
      std::string(kPrefix) + "Failed to connect to remote host: Connection refused";
  for (const ConnectionSettings& s : {Plain(), Tls()}) {
    const absl::Status st = DescribeCallError(C::kUnavailable, refused, s);
    EXPECT_EQ(st.code(), C::kUnavailable);
    EXPECT_EQ(st.message(), "cannot reach gemmprofd at gpu-node:50051 (" + refused + ")");
  }
}

TEST(CallErrorsTest, TheDaemonsOwnUnavailableIsNotCalledUnreachable) {
  for (const std::string msg : {"no device is available to run jobs: NVIDIA H200 #0: its worker "
                                "failed to start 3 times in a row",
                                "gemmprofd is shutting down; job not accepted"}) {
    const absl::Status st = DescribeCallError(C::kUnavailable, msg, Plain());
    EXPECT_EQ(st.code(), C::kUnavailable);
    EXPECT_EQ(st.message(), msg);
  }
}

TEST(CallErrorsTest, AnUnreachableStoreIsNotCalledAnUnreachableDaemon) {
  const absl::Status st = DescribeCallError(
      C::kUnavailable,
      "PostgreSQL at db:5432 is unreachable: connection to server at \"db\", port 5432 failed: "
      "Connection refused; the call can be retried",
      Plain());
  EXPECT_EQ(st.code(), C::kUnavailable);
  EXPECT_EQ(st.message(),
            "gemmprofd at gpu-node:50051 is up, but its result store is not: PostgreSQL at "
            "db:5432 is unreachable: connection to server at \"db\", port 5432 failed: "
            "Connection refused; the call can be retried");
}

TEST(CallErrorsTest, DeadlineNamesTheTimeout) {
  ConnectionSettings s = Plain();
  s.timeout_s = 7;
  const absl::Status st = DescribeCallError(C::kDeadlineExceeded, "Deadline Exceeded", s);
  EXPECT_EQ(st.code(), C::kDeadlineExceeded);
  EXPECT_EQ(st.message(),
            "no answer from gemmprofd at gpu-node:50051 within 7 s; is it reachable? (--timeout "
            "SECONDS)");
  EXPECT_EQ(Message(C::kDeadlineExceeded, "the daemon's own deadline", s),
            "the daemon's own deadline");
}

TEST(CallErrorsTest, OtherCodesPassThrough) {
  const absl::Status st = DescribeCallError(C::kNotFound, "job 9 not found", Plain());
  EXPECT_EQ(st.code(), C::kNotFound);
  EXPECT_EQ(st.message(), "job 9 not found");
}

}  // namespace
}  // namespace gemmprof::client
