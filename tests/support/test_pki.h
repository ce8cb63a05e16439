// Throwaway certificates for TLS tests, made with the openssl command: a CA, a server
// certificate for localhost / 127.0.0.1 and a client certificate, all signed by that CA.
#pragma once

#include <string>

#include "core/status.h"

namespace gemmprof::testing {

struct TestPki {
  std::string ca_cert;  // paths of PEM files
  std::string ca_key;
  std::string server_cert;  // SAN DNS:localhost, IP:127.0.0.1
  std::string server_key;
  std::string client_cert;  // for mTLS
  std::string client_key;
};

// Writes <dir>/<prefix>-{ca,server,client}.{pem,key}; `prefix` also names the CA
// ("CN=<prefix> test CA"). Internal with the failing command when openssl fails.
absl::StatusOr<TestPki> MakeTestPki(const std::string& dir, const std::string& prefix);

// The whole file ("" when it cannot be read).
std::string ReadTextFile(const std::string& path);
// Replaces `path` with `content` (written to a temporary file, then renamed).
void WriteTextFile(const std::string& path, const std::string& content);

}  // namespace gemmprof::testing
