// gemmprofd --http: Prometheus /metrics, the read-only JSON API (api_routes.h) and the
// dashboard page at /, on cpp-httplib. It follows the gRPC side's security: HTTPS with
// the same certificate and key (and client CA) when TLS is on, bearer tokens when
// --tokens is on, and no plaintext on a non-loopback address without --insecure.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "core/status.h"
#include "server/security/access_control.h"
#include "server/storage/result_store.h"

namespace httplib {
class Server;
}

namespace gemmprof::http {

// "host:port" or "[v6]:port", port 0..65535 (0: pick a free one).
struct HttpAddress {
  std::string host;  // without brackets
  int port = 0;
};

// InvalidArgument naming --http, the value and what is expected.
absl::StatusOr<HttpAddress> ParseHttpAddress(const std::string& text);

struct HttpOptions {
  std::string address;  // --http
  // TLS files as given to gemmprofd; an empty cert means plaintext. Read once at start:
  // SIGHUP reloads them for gRPC only.
  std::string tls_cert;
  std::string tls_key;
  std::string tls_client_ca;
  bool insecure = false;
  // Tokens (shared with the gRPC side, so SIGHUP reloads apply). Null or disabled: open.
  std::shared_ptr<const security::AccessControl> access;
};

// What the routes read. The store and the functions must outlive the server.
struct HttpSources {
  storage::ResultStore* store = nullptr;
  std::function<std::string()> metrics;  // the /metrics document
  std::function<int64_t()> now_ms;       // wall clock, for ages in ?since=; default: system
};

// Serves on its own threads from Start until Stop (or destruction).
class HttpServer {
 public:
  // Binds and starts serving. InvalidArgument for a bad address, FailedPrecondition for
  // plaintext on the network without --insecure or an address that cannot be bound.
  static absl::StatusOr<std::unique_ptr<HttpServer>> Start(const HttpOptions& options,
                                                           HttpSources sources);
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  int port() const { return port_; }
  bool tls() const { return tls_; }
  // Stops accepting and waits for the listener thread. Idempotent.
  void Stop();

 private:
  HttpServer() = default;
  void AddRoutes(const HttpOptions& options);

  HttpSources sources_;
  std::unique_ptr<httplib::Server> server_;
  std::thread thread_;
  int port_ = 0;
  bool tls_ = false;
};

}  // namespace gemmprof::http
