// Throwaway TLS material for tests, made with the `openssl` command in a temp folder:
// a CA, a server certificate it signed (for localhost and 127.0.0.1), a client
// certificate it signed, and an unrelated second CA.
#pragma once

#include <string>

namespace gemmprof::client::testing {

struct TestCerts {
  std::string dir;
  std::string ca_pem, ca_key;          // the CA
  std::string server_pem, server_key;  // CN=localhost, SAN DNS:localhost, IP:127.0.0.1
  std::string client_pem, client_key;  // CN=alice
  std::string other_ca_pem;            // a CA that signed none of the above
};

// Makes the files once per process under the test temp dir; fails the calling
// test (ADD_FAILURE) and returns empty paths when openssl fails.
const TestCerts& MakeTestCerts();

// The file's content.
std::string ReadFileText(const std::string& path);

}  // namespace gemmprof::client::testing
