// An in-process gemmprofd with tokens, limits and optionally TLS, for the security
// tests: the real queue, store and gRPC server on an ephemeral port, the fake runner,
// and helpers to make plaintext or TLS channels and to put a token on a call.
#pragma once

#include <grpcpp/create_channel.h>
#include <grpcpp/security/credentials.h>
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "gemmprof/v1/gemmprof.grpc.pb.h"
#include "server/api/server.h"
#include "server/storage/sqlite/sqlite_store.h"
#include "tests/support/fake_runner.h"
#include "tests/support/temp_dir.h"
#include "tests/support/test_pki.h"
#include "wire/token.h"

namespace gemmprof::api {

// The tokens of the tokens file every secure test starts with.
inline constexpr char kReadToken[] = "gpt_alice-reads-only";
inline constexpr char kSubmitToken[] = "gpt_bob-submits";
inline constexpr char kOtherSubmitToken[] = "gpt_carol-submits-too";
inline constexpr char kAdminToken[] = "gpt_root-does-anything";

class SecureApiTest : public ::testing::Test {
 protected:
  void TearDown() override {
    runner_.Release();
    if (server_) server_->Shutdown(std::chrono::milliseconds(100));
    if (queue_) queue_->Stop();
  }

  // alice read, bob submit, carol submit, root admin.
  std::string WriteTokensFile() {
    const std::string path = dir_.File("tokens");
    testing::WriteTextFile(path, "# test tokens\nalice read " + wire::TokenSha256Hex(kReadToken) +
                                     "\nbob submit " + wire::TokenSha256Hex(kSubmitToken) +
                                     "\ncarol submit " + wire::TokenSha256Hex(kOtherSubmitToken) +
                                     "\nroot admin " + wire::TokenSha256Hex(kAdminToken) + "\n");
    return path;
  }

  // The tokens file above as an AccessControl.
  std::shared_ptr<security::AccessControl> Tokens() {
    auto ac = security::AccessControl::FromFile(WriteTokensFile());
    EXPECT_TRUE(ac.ok()) << ac.status();
    return ac.ok() ? std::shared_ptr<security::AccessControl>(*std::move(ac)) : nullptr;
  }

  // Opens the store and queue and starts the server on 127.0.0.1:0.
  void Start(ServerOptions options, queue::QueueLimits limits = {}) {
    auto store = storage::SqliteStore::Open(dir_.File("secure.db"));
    ASSERT_TRUE(store.ok()) << store.status();
    store_ = *std::move(store);
    queue_ =
        std::make_unique<queue::JobQueue>(*store_, std::vector<device::Runner*>{&runner_}, limits);
    ASSERT_TRUE(queue_->Start().ok());
    options.listen = "127.0.0.1:0";
    auto server = Server::Start(options, *queue_);
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = *std::move(server);
  }

  std::string Address() const { return "127.0.0.1:" + std::to_string(server_->port()); }

  std::unique_ptr<v1::GemmProf::Stub> PlaintextStub() {
    return v1::GemmProf::NewStub(
        grpc::CreateChannel(Address(), grpc::InsecureChannelCredentials()));
  }

  // A fresh channel (its own connection) trusting `ca_pem`, optionally with a client
  // certificate.
  std::shared_ptr<grpc::Channel> TlsChannel(const std::string& ca_pem,
                                            const std::string& client_cert_pem = "",
                                            const std::string& client_key_pem = "") {
    grpc::SslCredentialsOptions o;
    o.pem_root_certs = ca_pem;
    o.pem_cert_chain = client_cert_pem;
    o.pem_private_key = client_key_pem;
    grpc::ChannelArguments args;
    // Channels with equal arguments may share a connection; each test channel must not.
    args.SetInt("gemmprof.test.channel", ++channels_);
    return grpc::CreateCustomChannel(Address(), grpc::SslCredentials(o), args);
  }

  // A context with a deadline and, unless empty, "authorization: Bearer <token>".
  static std::unique_ptr<grpc::ClientContext> Ctx(const std::string& token) {
    auto ctx = std::make_unique<grpc::ClientContext>();
    ctx->set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    if (!token.empty()) ctx->AddMetadata(wire::kAuthorizationHeader, wire::kBearerPrefix + token);
    return ctx;
  }

  static v1::SubmitJobRequest OneShape() {
    v1::SubmitJobRequest req;
    auto* s = req.mutable_shapes()->add_shapes();
    s->set_m(32);
    s->set_k(16);
    s->set_n(48);
    req.add_recipes("bf16");
    req.mutable_timing()->set_timed_iters(2);
    req.mutable_timing()->set_warmup_iters(1);
    return req;
  }

  // Submits OneShape() with `token`; returns the job id (0 on failure, with a test failure).
  int64_t Submit(v1::GemmProf::Stub& stub, const std::string& token) {
    v1::SubmitJobResponse resp;
    grpc::Status s = stub.SubmitJob(Ctx(token).get(), OneShape(), &resp);
    EXPECT_TRUE(s.ok()) << s.error_message();
    return resp.job_id();
  }

  testing::TempDir dir_;
  testing::FakeRunner runner_;
  std::unique_ptr<storage::SqliteStore> store_;
  std::unique_ptr<queue::JobQueue> queue_;
  std::unique_ptr<Server> server_;
  int channels_ = 0;
};

}  // namespace gemmprof::api
