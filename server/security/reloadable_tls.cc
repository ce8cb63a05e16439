#include "server/security/reloadable_tls.h"

#include <grpc/grpc.h>

#include <utility>

namespace gemmprof::security {
namespace {

// grpc::ServerCredentials for an SSL port whose certificate config comes from a
// fetcher. gRPC's own SslServerCredentials takes fixed PEM strings only.
class FetcherServerCredentials final : public grpc::ServerCredentials {
 public:
  FetcherServerCredentials(std::shared_ptr<ReloadableTls> owner, bool mutual,
                           grpc_ssl_server_certificate_config_callback fetch)
      : owner_(std::move(owner)), mutual_(mutual), fetch_(fetch) {}

  // Token checks happen in the service handlers, the same on plaintext and TLS.
  void SetAuthMetadataProcessor(const std::shared_ptr<grpc::AuthMetadataProcessor>&) override {}

 private:
  int AddPortToServer(const std::string& addr, grpc_server* server) override {
    grpc_ssl_server_credentials_options* options =
        grpc_ssl_server_credentials_create_options_using_config_fetcher(
            mutual_ ? GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY
                    : GRPC_SSL_DONT_REQUEST_CLIENT_CERTIFICATE,
            fetch_, owner_.get());
    grpc_server_credentials* creds = grpc_ssl_server_credentials_create_with_options(options);
    const int port = grpc_server_add_http2_port(server, addr.c_str(), creds);
    grpc_server_credentials_release(creds);
    return port;
  }

  std::shared_ptr<ReloadableTls> owner_;
  bool mutual_;
  grpc_ssl_server_certificate_config_callback fetch_;
};

}  // namespace

absl::StatusOr<std::shared_ptr<ReloadableTls>> ReloadableTls::Create(TlsFiles files) {
  ASSIGN_OR_RETURN(TlsMaterial material, LoadTlsMaterial(files));
  return std::shared_ptr<ReloadableTls>(new ReloadableTls(std::move(files), std::move(material)));
}

ReloadableTls::ReloadableTls(TlsFiles files, TlsMaterial material)
    : files_(std::move(files)), material_(std::move(material)) {}

absl::Status ReloadableTls::Reload() {
  ASSIGN_OR_RETURN(TlsMaterial fresh, LoadTlsMaterial(files_));
  std::lock_guard lock(mu_);
  material_ = std::move(fresh);
  ++generation_;
  return absl::OkStatus();
}

std::shared_ptr<grpc::ServerCredentials> ReloadableTls::ServerCredentials() {
  return std::make_shared<FetcherServerCredentials>(shared_from_this(), mutual(), &Fetch);
}

std::string ReloadableTls::Describe() const {
  std::lock_guard lock(mu_);
  return "certificate " + material_.subject + ", valid until " + material_.not_after +
         (mutual() ? ", client certificates required" : "");
}

int64_t ReloadableTls::deliveries() const {
  std::lock_guard lock(mu_);
  return deliveries_;
}

grpc_ssl_certificate_config_reload_status ReloadableTls::Fetch(
    void* user_data, grpc_ssl_server_certificate_config** config) {
  auto* self = static_cast<ReloadableTls*>(user_data);
  std::lock_guard lock(self->mu_);
  if (self->delivered_ == self->generation_) return GRPC_SSL_CERTIFICATE_CONFIG_RELOAD_UNCHANGED;
  const TlsMaterial& m = self->material_;
  grpc_ssl_pem_key_cert_pair pair{m.private_key_pem.c_str(), m.cert_chain_pem.c_str()};
  // gRPC requires root certificates in every config; without mTLS no client certificate
  // is requested, so the server's own chain stands in and is never consulted.
  const std::string& roots = self->mutual() ? m.client_ca_pem : m.cert_chain_pem;
  *config = grpc_ssl_server_certificate_config_create(roots.c_str(), &pair, 1);
  self->delivered_ = self->generation_;
  ++self->deliveries_;
  return GRPC_SSL_CERTIFICATE_CONFIG_RELOAD_NEW;
}

}  // namespace gemmprof::security
