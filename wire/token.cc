#include "wire/token.h"

#include <openssl/evp.h>
#include <openssl/rand.h>

#include <array>
#include <cctype>

namespace gemmprof::wire {
namespace {

constexpr char kBase64Url[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

std::string Base64UrlNoPad(const unsigned char* data, size_t n) {
  std::string out;
  uint32_t acc = 0;
  int bits = 0;
  for (size_t i = 0; i < n; ++i) {
    acc = (acc << 8) | data[i];
    bits += 8;
    while (bits >= 6) {
      bits -= 6;
      out.push_back(kBase64Url[(acc >> bits) & 0x3f]);
    }
  }
  if (bits > 0) out.push_back(kBase64Url[(acc << (6 - bits)) & 0x3f]);
  return out;
}

}  // namespace

absl::StatusOr<std::string> NewToken() {
  std::array<unsigned char, 32> random{};
  if (RAND_bytes(random.data(), static_cast<int>(random.size())) != 1) {
    return absl::InternalError("cannot draw random bytes for a token (OpenSSL RAND_bytes failed)");
  }
  return kTokenPrefix + Base64UrlNoPad(random.data(), random.size());
}

std::string TokenSha256Hex(std::string_view token) {
  std::array<unsigned char, EVP_MAX_MD_SIZE> digest{};
  unsigned int len = 0;
  EVP_Digest(token.data(), token.size(), digest.data(), &len, EVP_sha256(), nullptr);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(2 * len);
  for (unsigned int i = 0; i < len; ++i) {
    out.push_back(kHex[digest[i] >> 4]);
    out.push_back(kHex[digest[i] & 0xf]);
  }
  return out;
}

bool IsSha256Hex(std::string_view s) {
  if (s.size() != 64) return false;
  for (char c : s) {
    if (!std::isxdigit(static_cast<unsigned char>(c))) return false;
  }
  return true;
}

}  // namespace gemmprof::wire
