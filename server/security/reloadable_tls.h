// TLS for gemmprofd whose certificate, key and client CA can be replaced while it
// serves (SIGHUP): new handshakes use the newest material, connections already made
// keep theirs, and no call is dropped.
//
// gRPC 1.51 offers no certificate provider whose data can be replaced from outside
// (StaticDataCertificateProvider is fixed; FileWatcherCertificateProvider polls the
// files on its own clock, so a half-written file could be picked up and SIGHUP would
// mean nothing). Its SSL server credentials, though, take a certificate-config fetcher
// that the transport asks before each handshake; this class answers it with the
// material of the last successful Reload.
#pragma once

#include <grpc/grpc_security.h>
#include <grpcpp/security/server_credentials.h>

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

#include "core/status.h"
#include "server/security/tls_files.h"

namespace gemmprof::security {

// Thread-safe. Must outlive every gRPC server built with its credentials (the
// transport keeps a plain pointer to it); api::Server holds a reference for that.
class ReloadableTls : public std::enable_shared_from_this<ReloadableTls> {
 public:
  // Loads and checks the files (LoadTlsMaterial's errors).
  static absl::StatusOr<std::shared_ptr<ReloadableTls>> Create(TlsFiles files);

  // Reads and checks the files again. On success the next handshakes use the new
  // material; on error nothing changes and the error names the flag and the path.
  absl::Status Reload();

  // Credentials for grpc::ServerBuilder::AddListeningPort, for one listening port.
  // With a client CA, clients must present a certificate that it signed (mTLS).
  std::shared_ptr<grpc::ServerCredentials> ServerCredentials();

  bool mutual() const { return !files_.client_ca_path.empty(); }
  // "certificate CN=gpu-node-1, valid until Jan  1 00:00:00 2027 GMT, client certificates
  // required" (no secrets).
  std::string Describe() const;
  // How many times the transport took new material (1 after the first handshake setup).
  int64_t deliveries() const;

 private:
  explicit ReloadableTls(TlsFiles files, TlsMaterial material);
  // The fetcher gRPC calls (user_data = this).
  static grpc_ssl_certificate_config_reload_status Fetch(
      void* user_data, grpc_ssl_server_certificate_config** config);

  const TlsFiles files_;
  mutable std::mutex mu_;
  TlsMaterial material_;
  int64_t generation_ = 1;  // bumped by each successful Reload
  int64_t delivered_ = 0;   // the generation the transport holds
  int64_t deliveries_ = 0;
};

}  // namespace gemmprof::security
