// The daemon's gRPC server: the GemmProf service plus standard health checking and
// server reflection. Used by gemmprofd and by the in-process test fixtures.
#pragma once

#include <grpcpp/server.h>

#include <chrono>
#include <memory>
#include <string>

#include "core/status.h"
#include "server/api/service.h"
#include "server/security/access_control.h"
#include "server/security/reloadable_tls.h"

namespace gemmprof::api {

struct ServerOptions {
  std::string listen;  // "host:port"; port 0 picks a free one
  // TLS for the port; null serves plaintext (the caller decides whether it may).
  std::shared_ptr<security::ReloadableTls> tls;
  // Token checks; null allows every call.
  std::shared_ptr<const security::AccessControl> access;
  int max_watches_per_client = 32;
};

class Server {
 public:
  // Binds options.listen and starts serving. Unavailable when the address cannot be
  // bound. Health checking and reflection stay open to every caller.
  static absl::StatusOr<std::unique_ptr<Server>> Start(const ServerOptions& options,
                                                       queue::JobQueue& queue);
  // Plaintext, no tokens, default limits.
  static absl::StatusOr<std::unique_ptr<Server>> Start(const std::string& listen,
                                                       queue::JobQueue& queue) {
    return Start(ServerOptions{listen}, queue);
  }
  ~Server();

  // The bound port.
  int port() const { return port_; }
  // Marks the service NOT_SERVING, lets in-flight calls finish within `grace`, then
  // cancels the rest. Idempotent.
  void Shutdown(std::chrono::milliseconds grace);

 private:
  Server(std::shared_ptr<security::ReloadableTls> tls, std::unique_ptr<GemmProfService> service,
         std::unique_ptr<grpc::Server> server, int port);

  // The transport holds a plain pointer to it: it must outlive server_.
  std::shared_ptr<security::ReloadableTls> tls_;
  std::unique_ptr<GemmProfService> service_;
  std::unique_ptr<grpc::Server> server_;
  int port_ = 0;
  bool shut_down_ = false;
};

// The fully qualified service name used for per-service health checks.
inline constexpr char kServiceName[] = "gemmprof.v1.GemmProf";

}  // namespace gemmprof::api
