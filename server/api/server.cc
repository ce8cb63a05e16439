#include "server/api/server.h"

#include <grpcpp/ext/proto_server_reflection_plugin.h>
#include <grpcpp/health_check_service_interface.h>
#include <grpcpp/security/server_credentials.h>
#include <grpcpp/server_builder.h>

namespace gemmprof::api {

absl::StatusOr<std::unique_ptr<Server>> Server::Start(const ServerOptions& options,
                                                      queue::JobQueue& queue) {
  const std::string& listen = options.listen;
  grpc::EnableDefaultHealthCheckService(true);
  grpc::reflection::InitProtoReflectionServerBuilderPlugin();
  auto service =
      std::make_unique<GemmProfService>(queue, options.access, options.max_watches_per_client);
  grpc::ServerBuilder builder;
  int port = 0;
  builder.AddListeningPort(
      listen, options.tls ? options.tls->ServerCredentials() : grpc::InsecureServerCredentials(),
      &port);
  builder.RegisterService(service.get());
  // Reports carry every item of a job; large model sweeps exceed the 4 MiB default.
  builder.SetMaxSendMessageSize(256 << 20);
  builder.SetMaxReceiveMessageSize(64 << 20);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (server == nullptr || port == 0) {
    return absl::UnavailableError(
        "--listen: cannot bind '" + listen + "' " +
        (options.tls ? "(address in use, not host:port, or a certificate the TLS library refused)"
                     : "(address in use, or not host:port?)"));
  }
  if (auto* health = server->GetHealthCheckService()) {
    health->SetServingStatus(kServiceName, true);
    health->SetServingStatus("", true);
  }
  return std::unique_ptr<Server>(
      new Server(options.tls, std::move(service), std::move(server), port));
}

Server::Server(std::shared_ptr<security::ReloadableTls> tls,
               std::unique_ptr<GemmProfService> service, std::unique_ptr<grpc::Server> server,
               int port)
    : tls_(std::move(tls)), service_(std::move(service)), server_(std::move(server)), port_(port) {}

Server::~Server() { Shutdown(std::chrono::milliseconds(0)); }

void Server::Shutdown(std::chrono::milliseconds grace) {
  if (shut_down_) return;
  shut_down_ = true;
  if (auto* health = server_->GetHealthCheckService()) health->Shutdown();
  server_->Shutdown(std::chrono::system_clock::now() + grace);
  server_->Wait();
}

}  // namespace gemmprof::api
