// Checks of the PEM files a user names for TLS, so a wrong file is reported by its flag
// and path before any connection, not as a handshake failure. Uses OpenSSL's parser.
#pragma once

#include <string_view>

#include "core/status.h"

namespace gemmprof::client {

// `pem` holds at least one X.509 certificate. `where` names the setting and the path
// in errors ("--tls-ca: \"ca.pem\""). Errors: InvalidArgument.
absl::Status CheckCertificates(std::string_view pem, std::string_view where);

// `key_pem` is an unencrypted private key and belongs to the first certificate of
// `cert_pem`. Errors: InvalidArgument naming `key_where` (never the key's content).
absl::Status CheckKeyPair(std::string_view cert_pem, std::string_view key_pem,
                          std::string_view key_where);

}  // namespace gemmprof::client
