// The daemon's gRPC server: the GemmProf service plus standard health checking and
// server reflection. Used by gemmprofd and by the in-process test fixtures.
#pragma once

#include <grpcpp/server.h>

#include <chrono>
#include <memory>
#include <string>

#include "server/api/service.h"
#include "core/status.h"

namespace gemmprof::api {

class Server {
 public:
  // Binds `listen` ("host:port"; port 0 picks a free one) and starts serving.
  // Unavailable when the address cannot be bound.
  static absl::StatusOr<std::unique_ptr<Server>> Start(const std::string& listen,
                                                       queue::JobQueue& queue);
  ~Server();

  // The bound port.
  int port() const { return port_; }
  // Marks the service NOT_SERVING, lets in-flight calls finish within `grace`, then
  // cancels the rest. Idempotent.
  void Shutdown(std::chrono::milliseconds grace);

 private:
  Server(std::unique_ptr<GemmProfService> service, std::unique_ptr<grpc::Server> server, int port);

  std::unique_ptr<GemmProfService> service_;
  std::unique_ptr<grpc::Server> server_;
  int port_ = 0;
  bool shut_down_ = false;
};

// The fully qualified service name used for per-service health checks.
inline constexpr char kServiceName[] = "gemmprof.v1.GemmProf";

}  // namespace gemmprof::api
