#include "server/security/tls_files.h"

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include <memory>

#include "server/security/config_file.h"

namespace gemmprof::security {
namespace {

struct BioFree {
  void operator()(BIO* b) const { BIO_free(b); }
};
struct X509Free {
  void operator()(X509* x) const { X509_free(x); }
};
struct PkeyFree {
  void operator()(EVP_PKEY* k) const { EVP_PKEY_free(k); }
};
using BioPtr = std::unique_ptr<BIO, BioFree>;
using X509Ptr = std::unique_ptr<X509, X509Free>;
using PkeyPtr = std::unique_ptr<EVP_PKEY, PkeyFree>;

absl::Status Bad(const char* flag, const std::string& path, const std::string& problem) {
  ERR_clear_error();
  return absl::InvalidArgumentError(std::string(flag) + ": '" + path + "' " + problem);
}

BioPtr MemBio(const std::string& pem) {
  return BioPtr(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
}

// Refuses to ask for a pass phrase: the daemon has no terminal to ask on.
int NoPassphrase(char*, int, int, void*) { return -1; }

// Every certificate of a PEM bundle, in order.
std::vector<X509Ptr> ReadCertificates(const std::string& pem) {
  std::vector<X509Ptr> certs;
  BioPtr bio = MemBio(pem);
  while (X509* x = PEM_read_bio_X509(bio.get(), nullptr, NoPassphrase, nullptr)) {
    certs.emplace_back(x);
  }
  ERR_clear_error();  // the loop ends on "no start line"
  return certs;
}

std::string NameText(const X509_NAME* name) {
  BioPtr bio(BIO_new(BIO_s_mem()));
  X509_NAME_print_ex(bio.get(), name, 0, XN_FLAG_RFC2253);
  char* data = nullptr;
  const long n = BIO_get_mem_data(bio.get(), &data);
  return std::string(data, static_cast<size_t>(n));
}

std::string TimeText(const ASN1_TIME* t) {
  BioPtr bio(BIO_new(BIO_s_mem()));
  ASN1_TIME_print(bio.get(), t);
  char* data = nullptr;
  const long n = BIO_get_mem_data(bio.get(), &data);
  return std::string(data, static_cast<size_t>(n));
}

absl::StatusOr<std::string> ReadPem(const std::string& path, const char* flag) {
  ASSIGN_OR_RETURN(std::string text, ReadConfigFile(path, flag));
  if (text.empty()) return Bad(flag, path, "is empty");
  return text;
}

absl::Status CheckCertificate(const TlsFiles& f, TlsMaterial* m, X509Ptr* leaf) {
  std::vector<X509Ptr> chain = ReadCertificates(m->cert_chain_pem);
  if (chain.empty()) {
    return Bad("--tls-cert", f.cert_path,
               "holds no PEM certificate (expected -----BEGIN CERTIFICATE-----)");
  }
  *leaf = std::move(chain.front());
  m->subject = NameText(X509_get_subject_name(leaf->get()));
  m->not_after = TimeText(X509_get0_notAfter(leaf->get()));
  if (X509_cmp_current_time(X509_get0_notAfter(leaf->get())) <= 0) {
    return Bad("--tls-cert", f.cert_path, "holds a certificate that expired on " + m->not_after);
  }
  return absl::OkStatus();
}

absl::Status CheckKey(const TlsFiles& f, const TlsMaterial& m, X509* leaf) {
  BioPtr bio = MemBio(m.private_key_pem);
  PkeyPtr key(PEM_read_bio_PrivateKey(bio.get(), nullptr, NoPassphrase, nullptr));
  if (!key) {
    return Bad(
        "--tls-key", f.key_path,
        "holds no unencrypted PEM private key (expected a -----BEGIN ... PRIVATE KEY----- block)");
  }
  if (X509_check_private_key(leaf, key.get()) != 1) {
    return Bad("--tls-key", f.key_path,
               "does not match the certificate in --tls-cert '" + f.cert_path + "'");
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<TlsMaterial> LoadTlsMaterial(const TlsFiles& files) {
  if (files.cert_path.empty() || files.key_path.empty()) {
    return absl::InvalidArgumentError("--tls-cert and --tls-key go together: give both");
  }
  TlsMaterial m;
  ASSIGN_OR_RETURN(m.cert_chain_pem, ReadPem(files.cert_path, "--tls-cert"));
  ASSIGN_OR_RETURN(m.private_key_pem, ReadPem(files.key_path, "--tls-key"));
  X509Ptr leaf;
  RETURN_IF_ERROR(CheckCertificate(files, &m, &leaf));
  RETURN_IF_ERROR(CheckKey(files, m, leaf.get()));
  if (!files.client_ca_path.empty()) {
    ASSIGN_OR_RETURN(m.client_ca_pem, ReadPem(files.client_ca_path, "--tls-client-ca"));
    if (ReadCertificates(m.client_ca_pem).empty()) {
      return Bad("--tls-client-ca", files.client_ca_path,
                 "holds no PEM certificate (expected -----BEGIN CERTIFICATE-----)");
    }
  }
  return m;
}

}  // namespace gemmprof::security
