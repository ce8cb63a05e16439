#include "test_certs.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace gemmprof::client::testing {
namespace {

bool Sh(const std::string& command) {
  return std::system((command + " >/dev/null 2>&1").c_str()) == 0;
}

TestCerts Make() {
  TestCerts c;
  c.dir = ::testing::TempDir() + "gemmprof_certs_" + std::to_string(::getpid());
  std::filesystem::create_directories(c.dir);
  const std::string d = c.dir + "/";
  c.ca_pem = d + "ca.pem";
  c.ca_key = d + "ca.key";
  c.server_pem = d + "server.pem";
  c.server_key = d + "server.key";
  c.client_pem = d + "client.pem";
  c.client_key = d + "client.key";
  c.other_ca_pem = d + "other_ca.pem";
  std::ofstream(d + "server.ext") << "subjectAltName=DNS:localhost,IP:127.0.0.1\n";
  const std::string req = "openssl req -newkey rsa:2048 -nodes -days 2 ";
  const std::string sign =
      "openssl x509 -req -days 2 -CA " + c.ca_pem + " -CAkey " + c.ca_key + " -CAcreateserial ";
  const bool ok =
      Sh(req + "-x509 -keyout " + c.ca_key + " -out " + c.ca_pem + " -subj /CN=gemmprof-test-ca") &&
      Sh(req + "-x509 -keyout " + d + "other_ca.key -out " + c.other_ca_pem +
         " -subj /CN=other-ca") &&
      Sh(req + "-keyout " + c.server_key + " -out " + d + "server.csr -subj /CN=localhost") &&
      Sh(sign + "-in " + d + "server.csr -out " + c.server_pem + " -extfile " + d + "server.ext") &&
      Sh(req + "-keyout " + c.client_key + " -out " + d + "client.csr -subj /CN=alice") &&
      Sh(sign + "-in " + d + "client.csr -out " + c.client_pem);
  if (!ok) {
    ADD_FAILURE() << "openssl could not make test certificates in " << c.dir
                  << " (is the openssl command installed? deploy/install_deps.sh)";
    return TestCerts{};
  }
  return c;
}

}  // namespace

const TestCerts& MakeTestCerts() {
  // Made once per test process, removed when it exits.
  static const struct Owner {
    TestCerts certs = Make();
    ~Owner() {
      if (!certs.dir.empty()) std::filesystem::remove_all(certs.dir);
    }
  } owner;
  return owner.certs;
}

std::string ReadFileText(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace gemmprof::client::testing
