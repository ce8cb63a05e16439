// The certificate, key and client CA that gemmprofd serves TLS with (--tls-cert,
// --tls-key, --tls-client-ca), read and checked the way the TLS library will use them.
#pragma once

#include <string>

#include "core/status.h"

namespace gemmprof::security {

struct TlsFiles {
  std::string cert_path;       // PEM certificate chain, leaf first
  std::string key_path;        // PEM private key of the leaf, unencrypted
  std::string client_ca_path;  // PEM CA bundle for client certificates; empty: no mTLS
};

// What the files held, checked.
struct TlsMaterial {
  std::string cert_chain_pem;
  std::string private_key_pem;  // a secret: never logged or put in a message
  std::string client_ca_pem;    // empty without mTLS
  std::string subject;          // of the leaf, for the log ("CN=gpu-node-1")
  std::string not_after;        // of the leaf, for the log ("Jan  1 00:00:00 2027 GMT")
};

// Reads the files and checks that each holds what its flag expects: a PEM certificate
// chain that has not expired, an unencrypted PEM private key that matches the leaf
// certificate, and (with a client CA) at least one PEM CA certificate. InvalidArgument
// naming the flag and the path: missing, unreadable, a directory, empty, no PEM block
// of the right kind, or a key that does not match the certificate.
absl::StatusOr<TlsMaterial> LoadTlsMaterial(const TlsFiles& files);

}  // namespace gemmprof::security
