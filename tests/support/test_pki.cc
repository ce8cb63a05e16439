#include "tests/support/test_pki.h"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

namespace gemmprof::testing {
namespace {

absl::Status Sh(const std::string& command) {
  const std::string full = command + " >/dev/null 2>&1";
  if (std::system(full.c_str()) != 0) return absl::InternalError("failed: " + command);
  return absl::OkStatus();
}

// EC keys: much faster to make than RSA, and what gRPC serves fine.
constexpr char kNewKey[] = "-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes";

absl::Status Issue(const std::string& base, const std::string& cn, const std::string& ext,
                   const TestPki& pki) {
  WriteTextFile(base + ".ext", ext);
  RETURN_IF_ERROR(Sh(std::string("openssl req -new ") + kNewKey + " -keyout '" + base +
                     ".key' -out '" + base + ".csr' -subj '/CN=" + cn + "'"));
  return Sh("openssl x509 -req -in '" + base + ".csr' -CA '" + pki.ca_cert + "' -CAkey '" +
            pki.ca_key + "' -CAcreateserial -out '" + base + ".pem' -days 2 -extfile '" + base +
            ".ext'");
}

}  // namespace

absl::StatusOr<TestPki> MakeTestPki(const std::string& dir, const std::string& prefix) {
  const std::string base = dir + "/" + prefix;
  TestPki pki{base + "-ca.pem",     base + "-ca.key",     base + "-server.pem",
              base + "-server.key", base + "-client.pem", base + "-client.key"};
  RETURN_IF_ERROR(Sh(std::string("openssl req -x509 ") + kNewKey + " -keyout '" + pki.ca_key +
                     "' -out '" + pki.ca_cert + "' -days 2 -subj '/CN=" + prefix + " test CA'"));
  RETURN_IF_ERROR(Issue(base + "-server", "localhost",
                        "subjectAltName=DNS:localhost,IP:127.0.0.1\n"
                        "extendedKeyUsage=serverAuth\n",
                        pki));
  RETURN_IF_ERROR(
      Issue(base + "-client", prefix + " client", "extendedKeyUsage=clientAuth\n", pki));
  return pki;
}

std::string ReadTextFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void WriteTextFile(const std::string& path, const std::string& content) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << content;
  }
  std::rename(tmp.c_str(), path.c_str());
}

}  // namespace gemmprof::testing
