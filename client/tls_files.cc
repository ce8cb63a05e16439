#include "client/tls_files.h"

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include <memory>
#include <string>

namespace gemmprof::client {
namespace {

struct BioFree {
  void operator()(BIO* b) const { BIO_free(b); }
};
struct X509Free {
  void operator()(X509* x) const { X509_free(x); }
};
struct KeyFree {
  void operator()(EVP_PKEY* k) const { EVP_PKEY_free(k); }
};
using Bio = std::unique_ptr<BIO, BioFree>;
using Cert = std::unique_ptr<X509, X509Free>;
using Key = std::unique_ptr<EVP_PKEY, KeyFree>;

Bio Open(std::string_view pem) {
  return Bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
}

// A passphrase callback that gives none: OpenSSL would otherwise prompt on the terminal.
int NoPassphrase(char*, int, int, void*) { return 0; }

absl::Status Invalid(std::string_view where, std::string_view why) {
  ERR_clear_error();
  return absl::InvalidArgumentError(std::string(where) + " " + std::string(why));
}

}  // namespace

absl::Status CheckCertificates(std::string_view pem, std::string_view where) {
  Bio bio = Open(pem);
  Cert first(PEM_read_bio_X509(bio.get(), nullptr, &NoPassphrase, nullptr));
  if (first == nullptr) return Invalid(where, "holds no PEM certificate OpenSSL can read");
  ERR_clear_error();
  return absl::OkStatus();
}

absl::Status CheckKeyPair(std::string_view cert_pem, std::string_view key_pem,
                          std::string_view key_where) {
  if (key_pem.find("ENCRYPTED") != std::string_view::npos)
    return Invalid(key_where,
                   "is encrypted; gemmprof needs the key without a passphrase "
                   "(keep the file readable by you alone)");
  Bio key_bio = Open(key_pem);
  Key key(PEM_read_bio_PrivateKey(key_bio.get(), nullptr, &NoPassphrase, nullptr));
  if (key == nullptr) return Invalid(key_where, "holds no PEM private key OpenSSL can read");
  Bio cert_bio = Open(cert_pem);
  Cert cert(PEM_read_bio_X509(cert_bio.get(), nullptr, &NoPassphrase, nullptr));
  if (cert == nullptr || X509_check_private_key(cert.get(), key.get()) != 1)
    return Invalid(key_where, "does not belong to the client certificate (--tls-cert)");
  ERR_clear_error();
  return absl::OkStatus();
}

}  // namespace gemmprof::client
