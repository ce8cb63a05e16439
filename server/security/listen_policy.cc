#include "server/security/listen_policy.h"

#include <arpa/inet.h>

namespace gemmprof::security {
namespace {

std::string_view HostOf(std::string_view listen) {
  if (listen.starts_with("[")) {
    const size_t close = listen.find(']');
    return close == std::string_view::npos ? listen : listen.substr(1, close - 1);
  }
  const size_t colon = listen.rfind(':');
  return colon == std::string_view::npos ? listen : listen.substr(0, colon);
}

bool IsLoopbackHost(std::string_view host) {
  const std::string h(host);
  if (h == "localhost") return true;
  in_addr v4{};
  if (inet_pton(AF_INET, h.c_str(), &v4) == 1) return (ntohl(v4.s_addr) >> 24) == 127;
  in6_addr v6{};
  if (inet_pton(AF_INET6, h.c_str(), &v6) == 1) return IN6_IS_ADDR_LOOPBACK(&v6);
  return false;
}

}  // namespace

bool IsLoopbackListen(std::string_view listen) {
  if (listen.starts_with("unix:") || listen.starts_with("unix-abstract:")) return true;
  return IsLoopbackHost(HostOf(listen));
}

absl::Status CheckPlaintextListen(const std::string& listen, bool tls, bool insecure) {
  if (tls || insecure || IsLoopbackListen(listen)) return absl::OkStatus();
  return absl::FailedPreconditionError(
      "--listen " + listen +
      ": not a loopback address, and TLS is off; give --tls-cert and --tls-key (and "
      "--tokens), or --insecure to serve plaintext to the network anyway");
}

}  // namespace gemmprof::security
