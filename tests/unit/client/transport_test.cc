// The gRPC transport against a real in-process server that implements no method, and
// against an address where nothing listens.
#include "client/transport.h"

#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include "gemmprof/v1/gemmprof.grpc.pb.h"

namespace gemmprof::client {
namespace {

// Every method of the generated base service answers UNIMPLEMENTED.
std::unique_ptr<grpc::Server> StartServer(gemmprof::v1::GemmProf::Service& service, int& port) {
  grpc::ServerBuilder builder;
  builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
  builder.RegisterService(&service);
  return builder.BuildAndStart();
}

TEST(TransportTest, ServerStatusComesBackWithItsCode) {
  int port = 0;
  gemmprof::v1::GemmProf::Service service;
  std::unique_ptr<grpc::Server> server = StartServer(service, port);
  ASSERT_NE(server, nullptr);
  ConnectionSettings settings;
  settings.address = "127.0.0.1:" + std::to_string(port);
  auto client = Transport::Connect(settings);
  ASSERT_TRUE(client.ok()) << client.status();
  const auto report = (*client)->GetReport(1);
  EXPECT_EQ(report.status().code(), absl::StatusCode::kUnimplemented) << report.status();
  server->Shutdown();
}

TEST(TransportTest, NobodyListeningIsCannotReach) {
  // Bind then release a port, so nothing listens there.
  int port = 0;
  {
    gemmprof::v1::GemmProf::Service service;
    std::unique_ptr<grpc::Server> server = StartServer(service, port);
    ASSERT_NE(server, nullptr);
    server->Shutdown();
  }
  ConnectionSettings settings;
  settings.address = "127.0.0.1:" + std::to_string(port);
  auto client = Transport::Connect(settings);
  ASSERT_TRUE(client.ok()) << client.status();
  // Not retried: the error comes from the one attempt.
  const auto cancelled = (*client)->CancelJob(1);
  EXPECT_EQ(cancelled.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(std::string(cancelled.status().message())
                .rfind("cannot reach gemmprofd at " + settings.address + " (", 0),
            0u)
      << cancelled.status();
}

}  // namespace
}  // namespace gemmprof::client
